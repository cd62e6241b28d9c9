//! The feature-map conformance suite (DESIGN §2 "Tests", §7): checks every [`FeatureMap`] and
//! [`LearnableMap`] must pass, public so that users can run it on their own maps.
//!
//! Each `check_*` function measures something and returns the numbers in a report rather than
//! panicking; it returns `Err` only when the map fails in a way that prevents measuring (e.g.
//! `forward` erroring on valid input). [`run_all`] and [`run_all_learnable`] run the whole suite
//! and return [`FeatMapError::ConformanceFailed`] listing every failed check.
//!
//! The checks:
//! - [`check_shapes`]: Φ is n × D and finite; `forward_rows` agrees with `forward`; an empty
//!   input gives 0 × D; an input with the wrong number of columns is an error, not a panic.
//! - [`check_representations`]: dense and sparse copies of X give the same Φ (to 1e-10
//!   relative).
//! - [`check_determinism`]: two maps built from the same seed give bitwise equal Φ, a repeated
//!   forward is bitwise equal, and Φ computed in a 1-thread and a 2-thread rayon pool agree.
//! - [`check_kernel_approximation`]: the error of ΦΦᵀ against the exact kernel matrix falls as
//!   D grows, optionally with a log–log slope in a given range (about −1/2 for random features).
//! - [`check_exact_kernel`]: ΦΦᵀ equals the kernel matrix to a relative tolerance (Nyström with
//!   every point a landmark, the identity map with the linear kernel).
//! - [`check_backward`]: `backward` against central finite differences of the random linear
//!   functional f(U) = ⟨G, φ_U(X)⟩ for every parameter (or a random subset), plus the
//!   `set_params` contract (round trip, wrong shapes and NaN rejected without side effects) and
//!   rejection of a wrongly shaped G.

use std::fmt;

use gimc_linalg::dense::{frob_dot, in_pool};
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::{GimcRng, child, gaussian_mat, seeded};
use gimc_linalg::sparse::dense_to_csr;
use gimc_linalg::{FeatureMatrix, Kernel, kernel_block};

use crate::Result;
use crate::error::{FeatMapError, check_pos, param_err};
use crate::map::{FeatureMap, LearnableMap};

/// The result of one check, with the measured value and the limit it was held to.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOutcome {
    /// Name of the check.
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// The measured value (an error, a difference, or 1/0 for yes/no checks).
    pub value: f64,
    /// The limit `value` was compared with (`NaN` for yes/no checks).
    pub limit: f64,
    /// Further information (sizes, the measured sequence, …).
    pub detail: String,
}

/// A list of check outcomes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConformanceReport {
    /// Every check run, in order.
    pub outcomes: Vec<CheckOutcome>,
}

impl ConformanceReport {
    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.outcomes.iter().all(|o| o.passed)
    }

    /// The failed checks.
    pub fn failures(&self) -> Vec<&CheckOutcome> {
        self.outcomes.iter().filter(|o| !o.passed).collect()
    }

    /// The outcome named `name`, if that check ran.
    pub fn get(&self, name: &str) -> Option<&CheckOutcome> {
        self.outcomes.iter().find(|o| o.name == name)
    }

    /// Appends the outcomes of `other`, prefixing their names with `prefix` (if non-empty).
    pub fn extend(&mut self, prefix: &str, other: ConformanceReport) {
        for mut o in other.outcomes {
            if !prefix.is_empty() {
                o.name = format!("{prefix}: {}", o.name);
            }
            self.outcomes.push(o);
        }
    }

    /// `Ok(self)` if every check passed, else [`FeatMapError::ConformanceFailed`] listing the
    /// failures with their measured values.
    pub fn into_result(self) -> Result<Self> {
        if self.passed() {
            return Ok(self);
        }
        let summary = self
            .failures()
            .iter()
            .map(|o| {
                format!(
                    "{} (value {:e}, limit {:e}; {})",
                    o.name, o.value, o.limit, o.detail
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        Err(FeatMapError::ConformanceFailed { summary })
    }

    fn record(&mut self, name: &str, passed: bool, value: f64, limit: f64, detail: String) {
        self.outcomes.push(CheckOutcome {
            name: name.to_string(),
            passed,
            value,
            limit,
            detail,
        });
    }

    fn record_bool(&mut self, name: &str, passed: bool, detail: String) {
        self.record(
            name,
            passed,
            if passed { 1.0 } else { 0.0 },
            f64::NAN,
            detail,
        );
    }
}

impl fmt::Display for ConformanceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for o in &self.outcomes {
            writeln!(
                f,
                "{} {}: value {:e}, limit {:e} {}",
                if o.passed { "PASS" } else { "FAIL" },
                o.name,
                o.value,
                o.limit,
                o.detail
            )?;
        }
        Ok(())
    }
}

/// max |a − b| / max(1, max |a|) (∞ when the shapes differ).
fn rel_max_diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    if a.shape() != b.shape() {
        return f64::INFINITY;
    }
    let mut diff = 0.0f64;
    let mut scale = 1.0f64;
    for j in 0..a.ncols() {
        for (x, y) in a.col(j).iter().zip(b.col(j).iter()) {
            diff = diff.max((x - y).abs());
            scale = scale.max(x.abs());
        }
    }
    diff / scale
}

/// The same matrix in the other storage (dense ↔ sparse CSR).
pub fn other_representation(x: &FeatureMatrix) -> Result<FeatureMatrix> {
    Ok(match x {
        FeatureMatrix::Dense(m) => FeatureMatrix::sparse(dense_to_csr(m.as_ref())?)?,
        FeatureMatrix::Sparse(_) => FeatureMatrix::dense(x.to_dense())?,
    })
}

/// The exact kernel matrix K_ij = k(x_i, x_j) (n × n) for the approximation checks.
pub fn exact_kernel_matrix(kernel: &Kernel, x: &FeatureMatrix) -> Result<Mat<f64>> {
    Ok(kernel_block(kernel, x, x.to_dense().as_ref())?)
}

/// Shapes, finiteness, `forward_rows`, empty input and wrong-dimension rejection.
pub fn check_shapes<M: FeatureMap + ?Sized>(
    map: &M,
    x: &FeatureMatrix,
) -> Result<ConformanceReport> {
    let mut rep = ConformanceReport::default();
    let (n, d, big_d) = (x.nrows(), map.input_dim(), map.output_dim());
    let phi = map.forward(x)?;
    rep.record_bool(
        "forward shape",
        phi.shape() == (n, big_d),
        format!(
            "expected {n} x {big_d}, got {} x {}",
            phi.nrows(),
            phi.ncols()
        ),
    );
    let non_finite = (0..phi.ncols())
        .map(|j| phi.col(j).iter().filter(|v| !v.is_finite()).count())
        .sum::<usize>();
    rep.record(
        "forward finite",
        non_finite == 0,
        non_finite as f64,
        0.0,
        "number of non-finite entries".into(),
    );
    if n > 0 && phi.shape() == (n, big_d) {
        let rows = [n - 1, 0, n / 2, 0];
        let sub = map.forward_rows(x, &rows)?;
        let expect = Mat::from_fn(rows.len(), big_d, |i, j| phi[(rows[i], j)]);
        let diff = rel_max_diff(expect.as_ref(), sub.as_ref());
        rep.record(
            "forward_rows agrees with forward",
            diff <= 1e-12,
            diff,
            1e-12,
            "relative max difference".into(),
        );
    }
    let empty = map.forward(&x.select_rows(&[])?)?;
    rep.record_bool(
        "empty input",
        empty.shape() == (0, big_d),
        format!("got {} x {}", empty.nrows(), empty.ncols()),
    );
    let wrong = FeatureMatrix::Dense(Mat::zeros(2, d + 1));
    rep.record_bool(
        "wrong input dimension rejected",
        map.forward(&wrong).is_err(),
        format!("forward on a 2 x {} input", d + 1),
    );
    Ok(rep)
}

/// Φ of a dense and of a sparse copy of `x` agree to 1e-10 relative.
pub fn check_representations<M: FeatureMap + ?Sized>(
    map: &M,
    x: &FeatureMatrix,
) -> Result<ConformanceReport> {
    let mut rep = ConformanceReport::default();
    let other = other_representation(x)?;
    let a = map.forward(x)?;
    let b = map.forward(&other)?;
    let diff = rel_max_diff(a.as_ref(), b.as_ref());
    rep.record(
        "dense and sparse input agree",
        diff <= 1e-10,
        diff,
        1e-10,
        "relative max difference of Φ".into(),
    );
    Ok(rep)
}

/// Same seed ⇒ bitwise equal Φ; repeated forward bitwise equal; 1 vs 2 threads agree (to
/// 1e-12 relative; the built-in maps are bitwise equal).
pub fn check_determinism<M, F>(
    make_map: F,
    x: &FeatureMatrix,
    seed: u64,
) -> Result<ConformanceReport>
where
    M: FeatureMap + Sync,
    F: Fn(&mut GimcRng) -> Result<M>,
{
    let mut rep = ConformanceReport::default();
    let a = make_map(&mut seeded(seed))?;
    let b = make_map(&mut seeded(seed))?;
    let pa = a.forward(x)?;
    let pb = b.forward(x)?;
    rep.record_bool(
        "same seed gives bitwise equal maps",
        pa == pb,
        format!(
            "max difference {:e}",
            rel_max_diff(pa.as_ref(), pb.as_ref())
        ),
    );
    let again = a.forward(x)?;
    rep.record_bool(
        "repeated forward is bitwise equal",
        pa == again,
        String::new(),
    );
    let one = in_pool(1, || a.forward(x)).ok();
    let two = in_pool(2, || a.forward(x)).ok();
    match (one, two) {
        (Some(one), Some(two)) => {
            let (one, two) = (one?, two?);
            let diff = rel_max_diff(one.as_ref(), two.as_ref());
            rep.record(
                "1 and 2 threads agree",
                diff <= 1e-12,
                diff,
                1e-12,
                format!("bitwise equal: {}", one == two),
            );
        }
        _ => rep.record_bool(
            "1 and 2 threads agree",
            true,
            "skipped: could not build a thread pool".into(),
        ),
    }
    Ok(rep)
}

/// Settings of [`check_kernel_approximation`].
#[derive(Debug, Clone, PartialEq)]
pub struct KernelApproxConfig {
    /// Sizes passed to the map factory (e.g. m), at least two distinct output dimensions.
    pub sizes: Vec<usize>,
    /// Independent maps per size whose errors are averaged (≥ 1). Default 3.
    pub trials: usize,
    /// Seed of the trials' generators. Default 0.
    pub seed: u64,
    /// If set, the fitted log–log slope of the mean error against D must lie in this range.
    pub slope: Option<(f64, f64)>,
    /// Allowed relative rise of the mean error from one size to the next (sampling noise).
    /// Default 0.25.
    pub slack: f64,
}

impl KernelApproxConfig {
    /// The given sizes with the defaults.
    pub fn new(sizes: Vec<usize>) -> Self {
        Self {
            sizes,
            trials: 3,
            seed: 0,
            slope: None,
            slack: 0.25,
        }
    }

    /// Requires the log–log slope of the mean error to lie in `[lo, hi]`.
    pub fn with_slope(mut self, lo: f64, hi: f64) -> Self {
        self.slope = Some((lo, hi));
        self
    }

    /// Sets the number of trials per size.
    pub fn with_trials(mut self, trials: usize) -> Self {
        self.trials = trials;
        self
    }

    /// Sets the seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

/// The measurements of [`check_kernel_approximation`].
#[derive(Debug, Clone, PartialEq)]
pub struct KernelApproxReport {
    /// Output dimension D of the map at each size.
    pub output_dims: Vec<usize>,
    /// Mean over entries of |ΦΦᵀ − K|, averaged over the trials, per size.
    pub mean_abs_err: Vec<f64>,
    /// Max over entries of |ΦΦᵀ − K|, averaged over the trials, per size.
    pub max_abs_err: Vec<f64>,
    /// Least-squares slope of ln(mean error) against ln(D).
    pub slope_mean: f64,
    /// Least-squares slope of ln(max error) against ln(D).
    pub slope_max: f64,
    /// Whether the error fell (and the slope was in range, if one was required).
    pub passed: bool,
}

impl KernelApproxReport {
    /// The measurements as report outcomes.
    pub fn to_report(&self, cfg: &KernelApproxConfig) -> ConformanceReport {
        let mut rep = ConformanceReport::default();
        let detail = format!(
            "D = {:?}, mean error = {:?}, max error = {:?}",
            self.output_dims, self.mean_abs_err, self.max_abs_err
        );
        let first = self.mean_abs_err.first().copied().unwrap_or(f64::NAN);
        let last = self.mean_abs_err.last().copied().unwrap_or(f64::NAN);
        rep.record(
            "kernel error falls with D",
            falls(&self.mean_abs_err, cfg.slack),
            last / first,
            1.0,
            detail,
        );
        if let Some((lo, hi)) = cfg.slope {
            rep.record(
                "kernel error slope",
                (lo..=hi).contains(&self.slope_mean),
                self.slope_mean,
                hi,
                format!(
                    "required in [{lo}, {hi}]; slope of the max error {}",
                    self.slope_max
                ),
            );
        }
        rep
    }
}

/// The error at the last size is below the first, and never rises by more than `slack`.
fn falls(errs: &[f64], slack: f64) -> bool {
    match (errs.first(), errs.last()) {
        (Some(&a), Some(&b)) => b < a && errs.windows(2).all(|w| w[1] <= (1.0 + slack) * w[0]),
        _ => false,
    }
}

/// Least-squares slope of ln y against ln x (y clamped away from 0).
fn log_log_slope(x: &[usize], y: &[f64]) -> f64 {
    let lx: Vec<f64> = x.iter().map(|&v| (v as f64).ln()).collect();
    let ly: Vec<f64> = y.iter().map(|&v| v.max(f64::MIN_POSITIVE).ln()).collect();
    let k = lx.len() as f64;
    let (mx, my) = (lx.iter().sum::<f64>() / k, ly.iter().sum::<f64>() / k);
    let sxy: f64 = lx.iter().zip(&ly).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = lx.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

/// Measures the error of ΦΦᵀ against `exact` (n × n, e.g. from [`exact_kernel_matrix`]) for
/// maps built by `make_map(size, rng)` at every size in `cfg.sizes`.
pub fn check_kernel_approximation<M, F>(
    make_map: F,
    x: &FeatureMatrix,
    exact: MatRef<'_, f64>,
    cfg: &KernelApproxConfig,
) -> Result<KernelApproxReport>
where
    M: FeatureMap,
    F: Fn(usize, &mut GimcRng) -> Result<M>,
{
    let n = x.nrows();
    if exact.shape() != (n, n) {
        return Err(param_err(
            "exact",
            format!(
                "must be {n} x {n}, got {} x {}",
                exact.nrows(),
                exact.ncols()
            ),
        ));
    }
    if cfg.trials == 0 {
        return Err(param_err("trials", "must be at least 1"));
    }
    let base = seeded(cfg.seed);
    let (mut dims, mut mean_err, mut max_err) = (vec![], vec![], vec![]);
    for (s, &size) in cfg.sizes.iter().enumerate() {
        let (mut mean_sum, mut max_sum, mut dim) = (0.0, 0.0, 0);
        for t in 0..cfg.trials {
            let mut rng = child(&base, (s * cfg.trials + t) as u64);
            let map = make_map(size, &mut rng)?;
            dim = map.output_dim();
            let approx = map.approx_kernel(x, x)?;
            let (mut sum, mut max) = (0.0f64, 0.0f64);
            for j in 0..n {
                for (a, e) in approx.col(j).iter().zip(exact.col(j).iter()) {
                    let err = (a - e).abs();
                    sum += err;
                    max = max.max(err);
                }
            }
            mean_sum += sum / ((n * n).max(1) as f64);
            max_sum += max;
        }
        dims.push(dim);
        mean_err.push(mean_sum / cfg.trials as f64);
        max_err.push(max_sum / cfg.trials as f64);
    }
    let distinct = {
        let mut d = dims.clone();
        d.sort_unstable();
        d.dedup();
        d.len()
    };
    if distinct < 2 {
        return Err(param_err(
            "sizes",
            "need at least two distinct output dimensions",
        ));
    }
    let slope_mean = log_log_slope(&dims, &mean_err);
    let slope_max = log_log_slope(&dims, &max_err);
    let slope_ok = cfg
        .slope
        .is_none_or(|(lo, hi)| (lo..=hi).contains(&slope_mean));
    Ok(KernelApproxReport {
        passed: falls(&mean_err, cfg.slack) && slope_ok,
        output_dims: dims,
        mean_abs_err: mean_err,
        max_abs_err: max_err,
        slope_mean,
        slope_max,
    })
}

/// ‖ΦΦᵀ − K‖_F / ‖K‖_F ≤ `rtol` for the exact kernel matrix `exact` (n × n).
pub fn check_exact_kernel<M: FeatureMap + ?Sized>(
    map: &M,
    x: &FeatureMatrix,
    exact: MatRef<'_, f64>,
    rtol: f64,
) -> Result<ConformanceReport> {
    let mut rep = ConformanceReport::default();
    let approx = map.approx_kernel(x, x)?;
    let err = if approx.shape() == exact.shape() {
        (&approx - exact).norm_l2() / exact.norm_l2().max(f64::MIN_POSITIVE)
    } else {
        f64::INFINITY
    };
    rep.record(
        "exact kernel reproduced",
        err <= rtol,
        err,
        rtol,
        "relative Frobenius error of ΦΦᵀ".into(),
    );
    Ok(rep)
}

/// Settings of [`check_backward`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackwardConfig {
    /// Parameters checked by finite differences: all if there are at most this many, else a
    /// random subset of this size. Default 64.
    pub max_params: usize,
    /// Relative finite-difference step: h = step·max(1, |u|). Default 1e-5.
    pub step: f64,
    /// Tolerance on max |FD − backward| / max |backward|. Default 1e-6.
    pub tol: f64,
}

impl Default for BackwardConfig {
    fn default() -> Self {
        Self {
            max_params: 64,
            step: 1e-5,
            tol: 1e-6,
        }
    }
}

/// `backward` against central finite differences of ⟨G, φ_U(X)⟩ for a Gaussian G drawn from
/// `rng`, and the `set_params` / gradient-shape contracts. The map's parameters are restored
/// before returning.
pub fn check_backward<M: LearnableMap + ?Sized>(
    map: &mut M,
    x: &FeatureMatrix,
    rng: &mut GimcRng,
    cfg: &BackwardConfig,
) -> Result<ConformanceReport> {
    let mut rep = ConformanceReport::default();
    check_pos("step", cfg.step)?;
    let p0 = map.params().to_owned();
    let (rows, cols) = p0.shape();
    let g = gaussian_mat(rng, x.nrows(), map.output_dim(), 1.0);
    let phi0 = map.forward(x)?;
    let analytic = map.backward(x, g.as_ref())?;
    rep.record_bool(
        "backward shape",
        analytic.shape() == p0.shape(),
        format!(
            "expected {rows} x {cols}, got {} x {}",
            analytic.nrows(),
            analytic.ncols()
        ),
    );
    if analytic.shape() != p0.shape() {
        return Ok(rep);
    }
    let total = rows * cols;
    let picks: Vec<usize> = if total <= cfg.max_params {
        (0..total).collect()
    } else {
        let mut v = rand::seq::index::sample(rng, total, cfg.max_params).into_vec();
        v.sort_unstable();
        v
    };
    let mut fd_errors = || -> Result<(f64, f64)> {
        let (mut max_abs, mut fd_scale) = (0.0f64, 0.0f64);
        for &flat in &picks {
            let (i, j) = (flat % rows, flat / rows);
            let h = cfg.step * p0[(i, j)].abs().max(1.0);
            let mut f = [0.0; 2];
            for (slot, sign) in f.iter_mut().zip([1.0, -1.0]) {
                let mut p = p0.clone();
                p[(i, j)] += sign * h;
                map.set_params(p)?;
                *slot = frob_dot(g.as_ref(), map.forward(x)?.as_ref())?;
            }
            let fd = (f[0] - f[1]) / (2.0 * h);
            max_abs = max_abs.max((fd - analytic[(i, j)]).abs());
            fd_scale = fd_scale.max(fd.abs());
        }
        Ok((max_abs, fd_scale))
    };
    let measured = fd_errors();
    map.set_params(p0.clone())?;
    let (max_abs, fd_scale) = measured?;
    let scale = analytic.norm_max().max(fd_scale);
    let rel = if scale > 0.0 {
        max_abs / scale
    } else {
        max_abs
    };
    rep.record(
        "backward matches finite differences",
        rel <= cfg.tol,
        rel,
        cfg.tol,
        format!(
            "{} of {total} parameters checked; max abs error {max_abs:e}, gradient scale {scale:e}",
            picks.len()
        ),
    );
    let phi1 = map.forward(x)?;
    rep.record_bool(
        "set_params round trip",
        phi1 == phi0 && map.params() == p0.as_ref(),
        "Φ after restoring the parameters is bitwise equal".into(),
    );
    let wrong_shape = map.set_params(Mat::zeros(rows + 1, cols)).is_err();
    rep.record_bool(
        "set_params rejects a wrong shape",
        wrong_shape && map.params() == p0.as_ref(),
        String::new(),
    );
    let mut nan = p0.clone();
    if total > 0 {
        nan[(rows - 1, cols - 1)] = f64::NAN;
        let rejected = map.set_params(nan).is_err();
        rep.record_bool(
            "set_params rejects NaN",
            rejected && map.params() == p0.as_ref(),
            String::new(),
        );
    }
    let bad_g = Mat::<f64>::zeros(x.nrows(), map.output_dim() + 1);
    rep.record_bool(
        "backward rejects a wrongly shaped G",
        map.backward(x, bad_g.as_ref()).is_err(),
        String::new(),
    );
    // leave the map as found even if a faulty set_params accepted something above
    map.set_params(p0)?;
    Ok(rep)
}

/// Settings of [`run_all`] and [`run_all_learnable`].
#[derive(Debug, Clone, PartialEq)]
pub struct ConformanceConfig {
    /// Size passed to the map factory for the shape, determinism and backward checks.
    pub size: usize,
    /// Seed of every generator the suite uses.
    pub seed: u64,
    /// The exact kernel matrix on X the map approximates, if any (see [`exact_kernel_matrix`]).
    pub kernel: Option<Mat<f64>>,
    /// The kernel-approximation check to run when `kernel` is given.
    pub approx: Option<KernelApproxConfig>,
    /// A size at which the map must reproduce `kernel` exactly, with its relative tolerance.
    pub exact: Option<(usize, f64)>,
    /// The backward check's settings ([`run_all_learnable`]).
    pub backward: BackwardConfig,
}

impl ConformanceConfig {
    /// Shape, representation and determinism checks at `size`, seeded with `seed`.
    pub fn new(size: usize, seed: u64) -> Self {
        Self {
            size,
            seed,
            kernel: None,
            approx: None,
            exact: None,
            backward: BackwardConfig::default(),
        }
    }

    /// Adds the kernel-approximation check against `kernel` (n × n).
    pub fn with_kernel(mut self, kernel: Mat<f64>, approx: KernelApproxConfig) -> Self {
        self.kernel = Some(kernel);
        self.approx = Some(approx);
        self
    }

    /// Adds the exactness check at `size` (requires a kernel).
    pub fn with_exact(mut self, size: usize, rtol: f64) -> Self {
        self.exact = Some((size, rtol));
        self
    }
}

/// The checks [`run_all`] and [`run_all_learnable`] share, on maps built by `make_map`: the
/// report, failures included.
fn run_common<M: FeatureMap + Sync>(
    make_map: &dyn Fn(usize, &mut GimcRng) -> Result<M>,
    x: &FeatureMatrix,
    cfg: &ConformanceConfig,
) -> Result<ConformanceReport> {
    let mut rep = ConformanceReport::default();
    let map = make_map(cfg.size, &mut seeded(cfg.seed))?;
    let other = other_representation(x)?;
    rep.extend("shapes", check_shapes(&map, x)?);
    rep.extend("shapes (other storage)", check_shapes(&map, &other)?);
    rep.extend("", check_representations(&map, x)?);
    rep.extend(
        "determinism",
        check_determinism(|r| make_map(cfg.size, r), x, cfg.seed)?,
    );
    if let Some(kernel) = &cfg.kernel {
        if let Some(approx) = &cfg.approx {
            let r = check_kernel_approximation(make_map, x, kernel.as_ref(), approx)?;
            rep.extend("", r.to_report(approx));
        }
        if let Some((size, rtol)) = cfg.exact {
            let map = make_map(size, &mut seeded(cfg.seed))?;
            rep.extend("", check_exact_kernel(&map, x, kernel.as_ref(), rtol)?);
        }
    }
    Ok(rep)
}

/// Runs the suite on maps built by `make_map(size, rng)`: shapes on both storages, dense/sparse
/// agreement, determinism, and (if configured) kernel approximation and exactness. `Ok` with the
/// full report if every check passed, else [`FeatMapError::ConformanceFailed`].
pub fn run_all<M, F>(
    make_map: F,
    x: &FeatureMatrix,
    cfg: &ConformanceConfig,
) -> Result<ConformanceReport>
where
    M: FeatureMap + Sync,
    F: Fn(usize, &mut GimcRng) -> Result<M>,
{
    run_common(&make_map, x, cfg)?.into_result()
}

/// [`run_all`] plus [`check_backward`] on `x` and on its other storage (dense ↔ sparse).
pub fn run_all_learnable<M, F>(
    make_map: F,
    x: &FeatureMatrix,
    cfg: &ConformanceConfig,
) -> Result<ConformanceReport>
where
    M: LearnableMap + Sync,
    F: Fn(usize, &mut GimcRng) -> Result<M>,
{
    let mut rep = run_common(&make_map, x, cfg)?;
    let mut map = make_map(cfg.size, &mut seeded(cfg.seed))?;
    let other = other_representation(x)?;
    let base = seeded(cfg.seed);
    let (first, second) = if x.is_sparse() {
        ("sparse", "dense")
    } else {
        ("dense", "sparse")
    };
    rep.extend(
        &format!("backward ({first})"),
        check_backward(&mut map, x, &mut child(&base, 1), &cfg.backward)?,
    );
    rep.extend(
        &format!("backward ({second})"),
        check_backward(&mut map, &other, &mut child(&base, 2), &cfg.backward)?,
    );
    rep.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_and_fall_helpers() {
        let dims = [10, 100, 1000];
        let errs: Vec<f64> = dims.iter().map(|&d| 3.0 * (d as f64).powf(-0.5)).collect();
        assert!((log_log_slope(&dims, &errs) + 0.5).abs() < 1e-12);
        assert!(falls(&errs, 0.0));
        assert!(falls(&[1.0, 1.1, 0.5], 0.25));
        assert!(!falls(&[1.0, 1.5, 0.5], 0.25));
        assert!(!falls(&[1.0, 1.0], 0.25));
        assert!(!falls(&[], 0.25));
        let a = Mat::from_fn(2, 2, |i, j| (i + j) as f64);
        let b = Mat::from_fn(2, 2, |i, j| (i + j) as f64 + 0.5);
        assert!((rel_max_diff(a.as_ref(), b.as_ref()) - 0.25).abs() < 1e-15);
        assert_eq!(
            rel_max_diff(a.as_ref(), Mat::zeros(1, 2).as_ref()),
            f64::INFINITY
        );
    }

    #[test]
    fn report_into_result_lists_failures() {
        let mut rep = ConformanceReport::default();
        rep.record("good", true, 0.0, 1.0, String::new());
        assert!(rep.clone().into_result().is_ok());
        rep.record("bad", false, 2.0, 1.0, "too big".into());
        match rep.into_result() {
            Err(FeatMapError::ConformanceFailed { summary }) => {
                assert!(summary.contains("bad") && !summary.contains("good"))
            }
            other => panic!("{other:?}"),
        }
    }
}
