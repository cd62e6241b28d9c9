//! The papers' synthetic data, all drawn from a [`GimcRng`] passed in (DESIGN §3.5, §4, §6).
//!
//! - [`gimc_fig1_toy`]: GIMC Fig. 1, A = XYᵀ + N with X, Y 200 × 50 standard Gaussian and N
//!   entries N(0, 0.1). The paper writes N(0, 0.1); we read 0.1 as the **variance** (standard
//!   deviation √0.1 ≈ 0.316), see [`Fig1Params::noise_variance`]. [`sample_entries`] /
//!   [`observe`] pick the observed fraction of entries. [`Fig1Target::Tanh`] is our
//!   nonlinear variant, A = c·tanh(XB)·tanh(YC)ᵀ + N with hidden B, C: the side information
//!   then explains A only through an unknown nonlinear map, the situation GIMC is built for.
//! - [`mc1_synthetic`]: the NIPS 2010 transduction generator (DESIGN §3.5).
//! - [`gaussian_imc`]: planted low-rank IMC with Gaussian features for the sample-complexity
//!   phase plot (`imc-sample-complexity`).
//! - [`two_class_2d`] (concentric rings: no linear separator) and [`blobs`] for clustering
//!   (`okmf-table2`'s synthetic 5,000 × 2, 2-class set, and general tests).

use std::f64::consts::PI;

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::linalg::matmul::matmul;
use gimc_linalg::faer::{Accum, Mat, MatRef, get_global_parallelism};
use gimc_linalg::rng::{GimcRng, gaussian_mat, gaussian_vec};
use rand::Rng;

use crate::error::{check_nonzero, param_err};
use crate::{DataError, Dataset, Result, Targets};

fn product(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    let mut out = Mat::<f64>::zeros(a.nrows(), b.ncols());
    matmul(
        out.as_mut(),
        Accum::Replace,
        a,
        b,
        1.0,
        get_global_parallelism(),
    );
    out
}

fn check_fraction(name: &'static str, f: f64) -> Result<()> {
    if (0.0..=1.0).contains(&f) {
        Ok(())
    } else {
        Err(param_err(name, format!("{f} is not in [0, 1]")))
    }
}

fn check_variance(name: &'static str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(param_err(
            name,
            format!("{v} is not a finite non-negative variance"),
        ))
    }
}

gimc_linalg::params! {
    /// Parameters of the GIMC Fig. 1 toy problem (defaults: the paper's). Start from
    /// [`Fig1Params::default`] and the `with_*` methods; [`Fig1Params::check`] validates them into
    /// the [`ValidFig1Params`] that [`gimc_fig1_toy`] takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Fig1Params => ValidFig1Params {
        /// Rows of A (and of X). Default 200.
        pub n_rows: usize = 200 => with_n_rows,
        /// Columns of A (rows of Y). Default 200.
        pub n_cols: usize = 200 => with_n_cols,
        /// Feature dimension of X and Y. Default 50.
        pub dim: usize = 50 => with_dim,
        /// Variance of the noise entries N_ij. Default 0.1 (the paper's "N(0, 0.1)", read as
        /// variance).
        pub noise_variance: f64 = 0.1 => with_noise_variance,
        /// How the clean matrix depends on the features. Default [`Fig1Target::Bilinear`].
        pub target: Fig1Target = Fig1Target::Bilinear => with_target,
    }
    /// Checks n_rows, n_cols, dim ≥ 1, a finite non-negative noise variance and, for
    /// [`Fig1Target::Tanh`], hidden ≥ 1 and a finite positive scale.
    check |this| -> crate::DataError {
        check_nonzero("n_rows", this.n_rows)?;
        check_nonzero("n_cols", this.n_cols)?;
        check_nonzero("dim", this.dim)?;
        check_variance("noise_variance", this.noise_variance)?;
        if let Fig1Target::Tanh { hidden, scale } = this.target {
            check_nonzero("hidden", hidden)?;
            if !(scale.is_finite() && scale > 0.0) {
                return Err(param_err(
                    "scale",
                    format!("{scale} is not a finite positive standard deviation"),
                ));
            }
        }
    }
}

/// The clean matrix of the Fig. 1 toy as a function of the features X, Y.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fig1Target {
    /// XYᵀ (DESIGN §4 as written): exactly bilinear in the raw features, so IMC on X, Y is the
    /// true model.
    Bilinear,
    /// c·tanh(XB)·tanh(YC)ᵀ with hidden B, C (dim × `hidden`) of independent N(0, `scale`²/dim)
    /// entries, so every pre-activation is N(0, `scale`²) for standard Gaussian rows, and c set
    /// so that the clean entries have the same mean square (dim) as XYᵀ (the noise then has the
    /// same relative size as in the bilinear toy). Rank `hidden`; the features reach A only
    /// through the unknown nonlinear map x ↦ tanh(Bᵀx).
    Tanh {
        /// Columns of B and C (the rank of the clean matrix).
        hidden: usize,
        /// Standard deviation of the pre-activations bᵀx (1: nearly linear; 3: nearly a sign).
        scale: f64,
    },
}

/// The toy problem: features and the noisy target matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Fig1Toy {
    /// Row features X (n_rows × dim), entries N(0, 1).
    pub x: Mat<f64>,
    /// Column features Y (n_cols × dim), entries N(0, 1).
    pub y: Mat<f64>,
    /// The noiseless matrix (XYᵀ, or the [`Fig1Target::Tanh`] matrix).
    pub clean: Mat<f64>,
    /// A = clean + N.
    pub a: Mat<f64>,
}

/// GIMC Fig. 1 data (DESIGN §4 `gimc-fig1`): A = clean + N with the clean matrix given by
/// `params.target` (XYᵀ by default). Draw order: X, Y, (B, C for [`Fig1Target::Tanh`]), then N.
pub fn gimc_fig1_toy(params: &ValidFig1Params, rng: &mut GimcRng) -> Result<Fig1Toy> {
    let x = gaussian_mat(rng, params.n_rows, params.dim, 1.0);
    let y = gaussian_mat(rng, params.n_cols, params.dim, 1.0);
    let clean = match params.target {
        Fig1Target::Bilinear => product(x.as_ref(), y.transpose()),
        Fig1Target::Tanh { hidden, scale } => {
            let std = scale / (params.dim as f64).sqrt();
            let b = gaussian_mat(rng, params.dim, hidden, std);
            let c = gaussian_mat(rng, params.dim, hidden, std);
            let f = product(x.as_ref(), b.as_ref());
            let g = product(y.as_ref(), c.as_ref());
            let f = Mat::from_fn(f.nrows(), f.ncols(), |i, j| f[(i, j)].tanh());
            let g = Mat::from_fn(g.nrows(), g.ncols(), |i, j| g[(i, j)].tanh());
            let raw = product(f.as_ref(), g.transpose());
            let mean_sq = raw.squared_norm_l2() / (raw.nrows() * raw.ncols()) as f64;
            // rescale to the bilinear toy's mean square E[(xᵀy)²] = dim
            let c = if mean_sq > 0.0 {
                (params.dim as f64 / mean_sq).sqrt()
            } else {
                1.0
            };
            Mat::from_fn(raw.nrows(), raw.ncols(), |i, j| c * raw[(i, j)])
        }
    };
    let noise = gaussian_mat(
        rng,
        params.n_rows,
        params.n_cols,
        params.noise_variance.sqrt(),
    );
    let a = &clean + &noise;
    Ok(Fig1Toy { x, y, clean, a })
}

/// round(`fraction`·nrows·ncols) distinct entries (i, j) drawn uniformly without replacement,
/// sorted by (i, j).
pub fn sample_entries(
    nrows: usize,
    ncols: usize,
    fraction: f64,
    rng: &mut GimcRng,
) -> Result<Vec<(usize, usize)>> {
    check_fraction("fraction", fraction)?;
    let total = nrows
        .checked_mul(ncols)
        .ok_or_else(|| param_err::<DataError>("nrows", "matrix too large"))?;
    let count = ((total as f64) * fraction).round() as usize;
    sample_count(nrows, ncols, count.min(total), rng)
}

/// `count` distinct entries of an nrows × ncols matrix, uniformly without replacement, sorted.
pub fn sample_count(
    nrows: usize,
    ncols: usize,
    count: usize,
    rng: &mut GimcRng,
) -> Result<Vec<(usize, usize)>> {
    let total = nrows
        .checked_mul(ncols)
        .ok_or_else(|| param_err::<DataError>("nrows", "matrix too large"))?;
    if count > total {
        return Err(param_err(
            "count",
            format!("{count} entries requested from a {nrows} x {ncols} matrix"),
        ));
    }
    let mut out: Vec<(usize, usize)> = rand::seq::index::sample(rng, total, count)
        .into_iter()
        .map(|k| (k / ncols, k % ncols))
        .collect();
    out.sort_unstable();
    Ok(out)
}

/// Observed entries (i, j, A_ij) for a random `fraction` of the entries of `a`, sorted.
pub fn observe(
    a: MatRef<'_, f64>,
    fraction: f64,
    rng: &mut GimcRng,
) -> Result<Vec<(usize, usize, f64)>> {
    Ok(sample_entries(a.nrows(), a.ncols(), fraction, rng)?
        .into_iter()
        .map(|(i, j)| (i, j, a[(i, j)]))
        .collect())
}

gimc_linalg::params! {
    /// Parameters of the MC-1 synthetic generator (DESIGN §3.5; defaults: t = 10, d = 20, n = 100,
    /// r = 2, σ² = 0.01, ω = 10 %, W and b variance 10). Start from [`Mc1Params::default`] and the
    /// `with_*` methods; [`Mc1Params::check`] validates them into the [`ValidMc1Params`] that
    /// [`mc1_synthetic`] takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Mc1Params => ValidMc1Params {
        /// Items n (columns).
        pub n: usize = 100 => with_n,
        /// Features d (rows of X).
        pub d: usize = 20 => with_d,
        /// Tasks / labels t (rows of Y).
        pub t: usize = 10 => with_t,
        /// Rank r of X0.
        pub rank: usize = 2 => with_rank,
        /// Feature noise variance σ².
        pub noise_variance: f64 = 0.01 => with_noise_variance,
        /// Fraction ω of feature entries and of label entries observed.
        pub observed_fraction: f64 = 0.1 => with_observed_fraction,
        /// Variance of the entries of W and b (10 in the paper).
        pub wb_variance: f64 = 10.0 => with_wb_variance,
    }
    /// Checks n, d, t, rank ≥ 1, rank ≤ min(d, n), finite non-negative variances and an
    /// observed fraction in [0, 1].
    check |this| -> crate::DataError {
        check_nonzero("n", this.n)?;
        check_nonzero("d", this.d)?;
        check_nonzero("t", this.t)?;
        check_nonzero("rank", this.rank)?;
        if this.rank > this.d.min(this.n) {
            return Err(param_err(
                "rank",
                format!("{} exceeds min(d, n) = {}", this.rank, this.d.min(this.n)),
            ));
        }
        check_variance("noise_variance", this.noise_variance)?;
        check_variance("wb_variance", this.wb_variance)?;
        check_fraction("observed_fraction", this.observed_fraction)?;
    }
}

/// MC-1 synthetic data: items are columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Mc1Data {
    /// Noiseless features X0 = L Rᵀ (d × n, rank r), rescaled so its entries have empirical
    /// variance 1.
    pub x0: Mat<f64>,
    /// Observed-to-be features X = X0 + N(0, σ²) (d × n).
    pub x: Mat<f64>,
    /// Label weights W (t × d), entries N(0, wb_variance).
    pub w: Mat<f64>,
    /// Label biases b (t), entries N(0, wb_variance).
    pub b: Vec<f64>,
    /// Soft labels Y0 = W X0 + b 1ᵀ (t × n).
    pub y0: Mat<f64>,
    /// Labels ±1 (t × n), P(y_ij = y | y0_ij) = 1 / (1 + exp(−y·y0_ij)).
    pub y: Mat<f64>,
    /// Observed feature entries Ω_X (row, item), sorted.
    pub observed_x: Vec<(usize, usize)>,
    /// Observed label entries Ω_Y (label, item), sorted.
    pub observed_y: Vec<(usize, usize)>,
}

/// The NIPS 2010 transduction generator (DESIGN §3.5). Draw order: L, R, noise, W, b, label
/// uniforms, Ω_X, Ω_Y.
pub fn mc1_synthetic(params: &ValidMc1Params, rng: &mut GimcRng) -> Result<Mc1Data> {
    let Mc1Params {
        n,
        d,
        t,
        rank,
        noise_variance,
        observed_fraction,
        wb_variance,
    } = **params;
    let l = gaussian_mat(rng, d, rank, 1.0);
    let r = gaussian_mat(rng, n, rank, 1.0);
    let mut x0 = product(l.as_ref(), r.transpose());
    // rescale to unit (empirical) variance
    let count = (d * n) as f64;
    let mean = (0..n)
        .map(|j| (0..d).map(|i| x0[(i, j)]).sum::<f64>())
        .sum::<f64>()
        / count;
    let var = (0..n)
        .map(|j| (0..d).map(|i| (x0[(i, j)] - mean).powi(2)).sum::<f64>())
        .sum::<f64>()
        / count;
    if var > 0.0 {
        let s = var.sqrt().recip();
        x0 = Mat::from_fn(d, n, |i, j| x0[(i, j)] * s);
    }
    let noise = gaussian_mat(rng, d, n, noise_variance.sqrt());
    let x = &x0 + &noise;
    let wb_std = wb_variance.sqrt();
    let w = gaussian_mat(rng, t, d, wb_std);
    let b = gaussian_vec(rng, t, wb_std);
    let wx = product(w.as_ref(), x0.as_ref());
    let y0 = Mat::from_fn(t, n, |i, j| wx[(i, j)] + b[i]);
    let mut y = Mat::<f64>::zeros(t, n);
    for j in 0..n {
        for i in 0..t {
            let p_plus = 1.0 / (1.0 + (-y0[(i, j)]).exp());
            let u: f64 = rng.random();
            y[(i, j)] = if u < p_plus { 1.0 } else { -1.0 };
        }
    }
    let observed_x = sample_entries(d, n, observed_fraction, rng)?;
    let observed_y = sample_entries(t, n, observed_fraction, rng)?;
    Ok(Mc1Data {
        x0,
        x,
        w,
        b,
        y0,
        y,
        observed_x,
        observed_y,
    })
}

gimc_linalg::params! {
    /// Parameters of the planted Gaussian IMC problem. No field has a safe default: build with
    /// [`GaussianImcParams::new`] (and the `with_*` methods to change a field);
    /// [`GaussianImcParams::check`] validates them into the [`ValidGaussianImcParams`] that
    /// [`gaussian_imc`] takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct GaussianImcParams => ValidGaussianImcParams {
        /// An n_rows × n_cols problem with d_rows- and d_cols-dimensional features, rank `rank` and
        /// `samples` observed entries.
        required {
            /// Rows n_x of A.
            pub n_rows: usize => with_n_rows,
            /// Columns n_y of A.
            pub n_cols: usize => with_n_cols,
            /// Row-feature dimension d_x.
            pub d_rows: usize => with_d_rows,
            /// Column-feature dimension d_y.
            pub d_cols: usize => with_d_cols,
            /// Rank k of Z.
            pub rank: usize => with_rank,
            /// Number of observed entries |Ω|.
            pub samples: usize => with_samples,
        }
    }
    /// Checks every size ≥ 1 (but `samples`), rank ≤ min(d_rows, d_cols) and
    /// samples ≤ n_rows·n_cols (the errors [`sample_count`] gives).
    check |this| -> crate::DataError {
        for (name, v) in [
            ("n_rows", this.n_rows),
            ("n_cols", this.n_cols),
            ("d_rows", this.d_rows),
            ("d_cols", this.d_cols),
            ("rank", this.rank),
        ] {
            check_nonzero(name, v)?;
        }
        if this.rank > this.d_rows.min(this.d_cols) {
            return Err(param_err(
                "rank",
                format!(
                    "{} exceeds min(d_rows, d_cols) = {}",
                    this.rank,
                    this.d_rows.min(this.d_cols)
                ),
            ));
        }
        let total = this
            .n_rows
            .checked_mul(this.n_cols)
            .ok_or_else(|| param_err::<DataError>("nrows", "matrix too large"))?;
        if this.samples > total {
            return Err(param_err(
                "count",
                format!(
                    "{} entries requested from a {} x {} matrix",
                    this.samples, this.n_rows, this.n_cols
                ),
            ));
        }
    }
}

/// Planted IMC data: A = X Z Yᵀ with Z = Z_L Z_Rᵀ of rank k.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianImc {
    /// Row features X (n_rows × d_rows), entries N(0, 1).
    pub x: Mat<f64>,
    /// Column features Y (n_cols × d_cols), entries N(0, 1).
    pub y: Mat<f64>,
    /// Z = Z_L Z_Rᵀ (d_rows × d_cols), Z_L entries N(0, 1/d_rows), Z_R entries N(0, 1/d_cols),
    /// so X Z_L and Y Z_R have unit-variance entries.
    pub z: Mat<f64>,
    /// |Ω| distinct observed entries (i, j, A_ij), uniformly drawn, sorted.
    pub observed: Vec<(usize, usize, f64)>,
    p: Mat<f64>,
    q: Mat<f64>,
}

impl GaussianImc {
    /// A_ij = x_iᵀ Z y_j (O(k) from the stored factors; bounds checked).
    pub fn entry(&self, i: usize, j: usize) -> Option<f64> {
        if i >= self.p.nrows() || j >= self.q.nrows() {
            return None;
        }
        Some(
            (0..self.p.ncols())
                .map(|c| self.p[(i, c)] * self.q[(j, c)])
                .sum(),
        )
    }

    /// The full n_rows × n_cols matrix A (for error measurement on small problems).
    pub fn full(&self) -> Mat<f64> {
        product(self.p.as_ref(), self.q.transpose())
    }
}

/// Planted Gaussian IMC (DESIGN §4 `imc-sample-complexity`). Draw order: X, Y, Z_L, Z_R, Ω.
pub fn gaussian_imc(params: &ValidGaussianImcParams, rng: &mut GimcRng) -> Result<GaussianImc> {
    let GaussianImcParams {
        n_rows,
        n_cols,
        d_rows,
        d_cols,
        rank,
        samples,
    } = **params;
    let x = gaussian_mat(rng, n_rows, d_rows, 1.0);
    let y = gaussian_mat(rng, n_cols, d_cols, 1.0);
    let zl = gaussian_mat(rng, d_rows, rank, (d_rows as f64).sqrt().recip());
    let zr = gaussian_mat(rng, d_cols, rank, (d_cols as f64).sqrt().recip());
    let z = product(zl.as_ref(), zr.transpose());
    let p = product(x.as_ref(), zl.as_ref());
    let q = product(y.as_ref(), zr.as_ref());
    let picks = sample_count(n_rows, n_cols, samples, rng)?;
    let mut out = GaussianImc {
        x,
        y,
        z,
        observed: Vec::new(),
        p,
        q,
    };
    out.observed = picks
        .into_iter()
        .map(|(i, j)| (i, j, out.entry(i, j).unwrap_or(0.0)))
        .collect();
    Ok(out)
}

/// Two concentric noisy rings in 2-D (radius 1: class 0 "inner", radius 3: class 1 "outer"),
/// alternating classes, angles uniform, Gaussian noise of standard deviation `noise_std` per
/// coordinate. No linear separator exists (both classes surround the origin); the radius
/// separates them when `noise_std` is well below 1. OKMF's synthetic set: n = 5,000.
pub fn two_class_2d(n: usize, noise_std: f64, rng: &mut GimcRng) -> Result<Dataset> {
    check_nonzero("n", n)?;
    check_variance("noise_std", noise_std)?;
    let mut x = Mat::<f64>::zeros(n, 2);
    let mut classes = Vec::with_capacity(n);
    for i in 0..n {
        let c = i % 2;
        let radius = if c == 0 { 1.0 } else { 3.0 };
        let theta = rng.random::<f64>() * 2.0 * PI;
        let e = gaussian_vec(rng, 2, noise_std);
        x[(i, 0)] = radius * theta.cos() + e[0];
        x[(i, 1)] = radius * theta.sin() + e[1];
        classes.push(c);
    }
    Dataset::new(
        "two_class_2d",
        FeatureMatrix::dense(x)?,
        Targets::Classes {
            classes,
            names: vec!["inner".into(), "outer".into()],
        },
        vec!["x".into(), "y".into()],
    )
}

gimc_linalg::params! {
    /// The shape of [`blobs`]. Build with [`BlobsParams::new`]; [`BlobsParams::check`] validates
    /// it into the [`ValidBlobsParams`] that [`blobs`] takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct BlobsParams => ValidBlobsParams {
        /// `n` points in `d` dimensions around `centres` centres, noise standard deviation `std`.
        required {
            /// Number of points n ≥ 1.
            pub n: usize,
            /// Dimension d ≥ 1.
            pub d: usize,
            /// Number of centres ≥ 1.
            pub centres: usize,
            /// Standard deviation of the noise per coordinate (finite, ≥ 0).
            pub std: f64,
        }
    }
    /// Checks n, d, centres ≥ 1 and a finite non-negative `std`.
    check |this| -> crate::DataError {
        check_nonzero("n", this.n)?;
        check_nonzero("d", this.d)?;
        check_nonzero("centres", this.centres)?;
        check_variance("std", this.std)?;
    }
}

/// `params.n` points in `params.d` dimensions around `params.centres` centres drawn uniformly in
/// [−10, 10]^d; point i belongs to class i mod `centres` and is its centre plus N(0, std²) noise
/// per coordinate.
pub fn blobs(params: &ValidBlobsParams, rng: &mut GimcRng) -> Result<Dataset> {
    let BlobsParams { n, d, centres, std } = **params;
    let c = Mat::from_fn(centres, d, |_, _| rng.random_range(-10.0..10.0));
    let mut x = Mat::<f64>::zeros(n, d);
    let mut classes = Vec::with_capacity(n);
    for i in 0..n {
        let k = i % centres;
        let e = gaussian_vec(rng, d, std);
        for j in 0..d {
            x[(i, j)] = c[(k, j)] + e[j];
        }
        classes.push(k);
    }
    let names = (0..centres).map(|k| format!("blob{k}")).collect();
    Dataset::new(
        "blobs",
        FeatureMatrix::dense(x)?,
        Targets::Classes { classes, names },
        (0..d).map(|j| format!("x{j}")).collect(),
    )
}
