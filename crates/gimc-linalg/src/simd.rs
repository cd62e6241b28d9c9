//! The x86 SIMD state that faer's GEMM kernels leave behind, and the one call that clears it.
//!
//! faer's matrix products (through the `gemm` crate's AVX-512 / AVX2 micro-kernels, and so also
//! `&a * &b`, `thin_svd` and every other routine that ends in a large product) return with the
//! upper halves of the vector registers *dirty*: no `vzeroupper` is executed after them. Our own
//! code is compiled for baseline x86-64, so its scalar floating-point instructions are legacy
//! SSE, while glibc's `exp`, `log1p`, `sin`, `cos`, `tanh`, … (chosen at load time for the FMA
//! machine) are VEX-encoded. With the upper state dirty, every switch between the two costs a
//! state transition, two per libm call. Measured on the project's machine (Intel Xeon, 2 cores),
//! a loop of `exp` + `ln_1p` runs at 7.6 ns per element on a clean state and at 244 ns after one
//! faer `matmul` (`sin`: 4.9 → 129 ns); plain arithmetic is unaffected. faer's symmetric
//! eigensolver and QR happen to end clean, which is why the cost came and went with the
//! surrounding code (MC-1's FPC step ends in an eigendecomposition, MC-b's does not: the same
//! loss evaluation was 5× slower in MC-b).
//!
//! [`clear_upper_state`] executes `vzeroupper` (when the CPU has AVX). It changes no value
//! anywhere: it only zeroes the upper register halves, which no live value occupies between
//! calls. Call it at the start of every loop of transcendental functions that may follow a
//! GEMM, once per thread (inside each rayon task, since the GEMM may have run on any of them).
//!
//! ```
//! use gimc_linalg::simd::clear_upper_state;
//!
//! let z = [0.5_f64, -1.0, 2.0];
//! clear_upper_state(); // before the libm-heavy loop
//! let loss: f64 = z.iter().map(|&m| (-m).exp().ln_1p()).sum();
//! assert!(loss > 0.0);
//! ```

/// Executes `vzeroupper` on x86-64 CPUs with AVX (a no-op elsewhere): clears the dirty upper
/// SIMD state a preceding faer GEMM leaves, so that the scalar libm calls after it run at their
/// normal speed. Values are unaffected.
#[inline]
pub fn clear_upper_state() {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU supports AVX (checked just above), the only requirement of
            // `vzeroupper`; no value lives in the upper register halves across this call.
            #[allow(unsafe_code)]
            unsafe {
                std::arch::x86_64::_mm256_zeroupper();
            }
        }
    }
}

/// Arguments with |x| above this go through the scalar `f64::sin_cos` (the three-part
/// Cody–Waite reduction of [`sin_cos_into`] keeps its error at rounding level well past it).
const SIN_COS_REDUCTION_LIMIT: f64 = 1.0e8;

/// π/2 in three parts (HI + MID + LO, each exactly representable), for the Cody–Waite
/// argument reduction r = x − q·π/2.
const PIO2_HI: f64 = f64::from_bits(0x3FF9_21FB_5444_2D18);
const PIO2_MID: f64 = f64::from_bits(0x3C91_A626_3314_5C07);
const PIO2_LO: f64 = f64::from_bits(0xB91F_1976_B7ED_8FBC);

/// Cephes' minimax coefficients on [−π/4, π/4]: sin r = r + r z P(z), cos r = 1 − z/2 +
/// z² Q(z), z = r² (relative error below 2.2·10⁻¹⁶ on that interval).
const SIN_COEF: [f64; 6] = [
    1.589_623_015_765_465_7e-10,
    -2.505_074_776_285_780_7e-8,
    2.755_731_362_138_572_5e-6,
    -1.984_126_982_958_954e-4,
    8.333_333_333_322_118e-3,
    -1.666_666_666_666_663e-1,
];
const COS_COEF: [f64; 6] = [
    -1.135_853_652_138_768_2e-11,
    2.087_570_084_197_473e-9,
    -2.755_731_417_929_674e-7,
    2.480_158_728_885_170_5e-5,
    -1.388_888_888_887_305_6e-3,
    4.166_666_666_666_659_3e-2,
];

/// (scale·sin x, scale·cos x) on four lanes without branches or libm calls: q = round(2x/π),
/// r = x − q·π/2 (three fused steps), the two polynomials on r, and the quadrant q mod 4
/// (in floating point, exact for |q| < 2⁵²) choosing and signing them. Written operation by
/// operation over the lanes, so that the compiler keeps every step in vector registers. Within
/// a few units in the last place for |x| ≤ [`SIN_COS_REDUCTION_LIMIT`]; larger or non-finite x
/// are redone by the caller.
#[inline(always)]
fn sin_cos_lanes(x: &[f64; 4], scale: f64) -> ([f64; 4], [f64; 4]) {
    let mut q = [0.0; 4];
    let mut r = [0.0; 4];
    for l in 0..4 {
        q[l] = (x[l] * std::f64::consts::FRAC_2_PI).round_ties_even();
        r[l] = (-q[l]).mul_add(PIO2_HI, x[l]);
        r[l] = (-q[l]).mul_add(PIO2_MID, r[l]);
        r[l] = (-q[l]).mul_add(PIO2_LO, r[l]);
    }
    let mut z = [0.0; 4];
    let mut ps = [SIN_COEF[0]; 4];
    let mut pc = [COS_COEF[0]; 4];
    for l in 0..4 {
        z[l] = r[l] * r[l];
    }
    for (&a, &b) in SIN_COEF[1..].iter().zip(&COS_COEF[1..]) {
        for l in 0..4 {
            ps[l] = ps[l].mul_add(z[l], a);
            pc[l] = pc[l].mul_add(z[l], b);
        }
    }
    let (mut s, mut c) = ([0.0; 4], [0.0; 4]);
    for l in 0..4 {
        let sin_r = (r[l] * z[l]).mul_add(ps[l], r[l]);
        let cos_r = (z[l] * z[l]).mul_add(pc[l], (-0.5f64).mul_add(z[l], 1.0));
        let quadrant = q[l] - 4.0 * (q[l] * 0.25).floor();
        let odd = quadrant == 1.0 || quadrant == 3.0;
        let sv = if odd { cos_r } else { sin_r };
        let cv = if odd { sin_r } else { cos_r };
        s[l] = if quadrant >= 2.0 { -sv } else { sv } * scale;
        c[l] = if quadrant == 1.0 || quadrant == 2.0 {
            -cv
        } else {
            cv
        } * scale;
    }
    (s, c)
}

/// Runs `f` inside a function compiled with AVX2 enabled when the CPU has it (as is
/// elsewhere): the loops of `f` that LLVM vectorises then run 4 lanes wide instead of
/// baseline x86-64's 2. Fused multiply-add is not enabled and Rust never contracts `a * b + c`
/// into one, so both paths compute the same operations in the same order: the same bits on
/// every CPU. Only what is inlined into `f` is compiled for AVX2: keep the loop in the closure
/// (or in `#[inline(always)]` functions), not behind calls into other crates.
///
/// ```
/// let x = [1.0, 2.0, 3.0, 4.0, 5.0];
/// let mut y = [0.5; 5];
/// gimc_linalg::simd::with_avx2(|| {
///     for (y, x) in y.iter_mut().zip(&x) {
///         *y += 2.0 * x;
///     }
/// });
/// assert_eq!(y, [2.5, 4.5, 6.5, 8.5, 10.5]);
/// ```
#[inline(always)]
pub fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        fn avx2<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
            // the `target_feature` function.
            #[allow(unsafe_code)]
            return unsafe { avx2(f) };
        }
    }
    f()
}

/// Defines `fn NAME(args) -> R` that runs the `#[inline(always)]` function BODY compiled
/// with AVX2 when the CPU has it, through a named `#[target_feature(enable = "avx2")]`
/// function, and BODY as it is otherwise. Fused multiply-add is not enabled and Rust never
/// contracts `a * b + c`, so both paths compute the same operations in the same order: the
/// same bits on every CPU.
///
/// This is the reliable form of [`with_avx2`](crate::simd::with_avx2): a closure passed
/// there is a function of its own, which the optimiser may leave out of line (and then it
/// runs as baseline x86-64's scalar and 128-bit code, as happened to the eigen sweep, the
/// sparse gather and GIMC's Ω kernels), while BODY here is `#[inline(always)]` and so always
/// compiled inside the AVX2 function. Give each hot loop its own dispatch, around as much
/// work as one call can take.
///
/// ```
/// #[inline(always)]
/// fn add_scaled(y: &mut [f64], x: &[f64], a: f64) {
///     for (y, x) in y.iter_mut().zip(x) {
///         *y += a * x;
///     }
/// }
/// gimc_linalg::avx2_dispatch! {
///     /// y += a·x, four lanes wide where the CPU allows.
///     fn add_scaled_fast(y: &mut [f64], x: &[f64], a: f64) = add_scaled;
/// }
/// let mut y = [0.5; 5];
/// add_scaled_fast(&mut y, &[1.0, 2.0, 3.0, 4.0, 5.0], 2.0);
/// assert_eq!(y, [2.5, 4.5, 6.5, 8.5, 10.5]);
/// ```
#[macro_export]
macro_rules! avx2_dispatch {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? = $body:path;) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                fn avx2($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                if ::std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2 (checked just above), the only
                    // requirement of the `target_feature` function.
                    #[allow(unsafe_code)]
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

/// The portable body of [`sin_cos_into`]: lanes of 4, then the tail padded to 4.
#[inline(always)]
fn sin_cos_body(x: &[f64], scale: f64, sin_out: &mut [f64], cos_out: &mut [f64]) {
    let mut xs = x.chunks_exact(4);
    let mut ss = sin_out.chunks_exact_mut(4);
    let mut cs = cos_out.chunks_exact_mut(4);
    for ((xc, sc), cc) in (&mut xs).zip(&mut ss).zip(&mut cs) {
        let lanes: &[f64; 4] = xc.try_into().unwrap_or(&[0.0; 4]);
        let (s, c) = sin_cos_lanes(lanes, scale);
        sc.copy_from_slice(&s);
        cc.copy_from_slice(&c);
    }
    let rest = xs.remainder();
    if !rest.is_empty() {
        let mut lanes = [0.0; 4];
        lanes[..rest.len()].copy_from_slice(rest);
        let (s, c) = sin_cos_lanes(&lanes, scale);
        ss.into_remainder().copy_from_slice(&s[..rest.len()]);
        cs.into_remainder().copy_from_slice(&c[..rest.len()]);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn sin_cos_body_fma(x: &[f64], scale: f64, sin_out: &mut [f64], cos_out: &mut [f64]) {
    sin_cos_body(x, scale, sin_out, cos_out);
}

/// `sin_out[i] = scale·sin x[i]`, `cos_out[i] = scale·cos x[i]`: the random Fourier feature
/// map's transcendental pass, vectorised (AVX2 + FMA where the CPU has them, picked at run
/// time). libm's scalar `sin_cos` is 11 % of a gimc-fig1 task's time; this runs the same
/// arithmetic (Cody–Waite reduction, Cephes polynomials) four lanes at a time. The fused
/// multiply-adds are exact operations, so the result is the same on every CPU (the portable
/// path computes them with `f64::mul_add` too); it agrees with libm to a few units in the last
/// place (a test checks ≤ 4·10⁻¹⁶ absolute over a wide range). Arguments beyond ±10⁸ and
/// non-finite ones take `f64::sin_cos` (NaN stays NaN).
///
/// ```
/// use gimc_linalg::simd::sin_cos_into;
///
/// let x = [0.0, 1.0, -2.5, 100.0];
/// let (mut s, mut c) = ([0.0; 4], [0.0; 4]);
/// sin_cos_into(&x, 1.0, &mut s, &mut c);
/// for i in 0..4 {
///     assert!((s[i] - x[i].sin()).abs() < 1e-15 && (c[i] - x[i].cos()).abs() < 1e-15);
/// }
/// ```
///
/// # Panics
/// If the three slices differ in length.
pub fn sin_cos_into(x: &[f64], scale: f64, sin_out: &mut [f64], cos_out: &mut [f64]) {
    assert!(
        x.len() == sin_out.len() && x.len() == cos_out.len(),
        "sin_cos_into: slices of different lengths"
    );
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only
            // requirement of the `target_feature` function.
            #[allow(unsafe_code)]
            unsafe {
                sin_cos_body_fma(x, scale, sin_out, cos_out);
            }
        } else {
            sin_cos_body(x, scale, sin_out, cos_out);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    sin_cos_body(x, scale, sin_out, cos_out);
    // the rare arguments outside the reduction's range (and NaN / ±∞), redone exactly
    for ((&v, s), c) in x.iter().zip(sin_out.iter_mut()).zip(cos_out.iter_mut()) {
        if v.is_nan() || v.abs() > SIN_COS_REDUCTION_LIMIT {
            let (sv, cv) = v.sin_cos();
            (*s, *c) = (scale * sv, scale * cv);
        }
    }
}

/// Arguments above this (and NaN) go through the scalar `f64::exp` in [`exp_in_place`]: e^x is
/// then near overflow, outside the bit-level scaling of the vector path.
const EXP_VECTOR_LIMIT: f64 = 708.0;

/// ln 2^{−1022}: below it e^x is subnormal, and the vector path returns 0 (an absolute error
/// below 2.3·10⁻³⁰⁸) rather than a subnormal, each of which costs a microcode assist wherever it
/// is produced or used (the products that follow a kernel block included).
const EXP_FLUSH: f64 = -708.396_418_532_264_1;

/// ln 2 in two parts (fdlibm's: HI has 21 trailing zero bits, so n·HI is exact for the n here).
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);

/// 1/k! for k = 13 down to 0: the Taylor polynomial of e^r on |r| ≤ ln 2 / 2 (truncation
/// below 5·10⁻¹⁸ relative).
const EXP_TAYLOR: [f64; 14] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
    1.0,
    1.0,
];

/// 1/(2k + 1) for k = 11 down to 1: log(1 + f) = 2 atanh s = 2s + 2s z Σ_k z^{k−1}/(2k + 1),
/// s = f / (2 + f), z = s², with |s| ≤ 1/5 (truncation below 2·10⁻¹⁷ relative).
const ATANH_SERIES: [f64; 11] = [
    1.0 / 23.0,
    1.0 / 21.0,
    1.0 / 19.0,
    1.0 / 17.0,
    1.0 / 15.0,
    1.0 / 13.0,
    1.0 / 11.0,
    1.0 / 9.0,
    1.0 / 7.0,
    1.0 / 5.0,
    1.0 / 3.0,
];

/// 1.5 · 2⁵²: adding it rounds a double of magnitude below 2⁵¹ to an integer held in the low
/// bits of the sum.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

/// Lanes of [`exp_lanes`] and [`logistic_lanes`]: four AVX2 vectors, so that four independent
/// chains of their polynomials and divisions overlap (one vector's chain alone is
/// latency-bound).
const EXP_LANES: usize = 16;

/// e^x on [`EXP_LANES`] lanes for x ≤ [`EXP_VECTOR_LIMIT`] (callers redo the lanes above it):
/// a Cody–Waite reduction r = x − n ln 2 (two fused steps), the Taylor polynomial of e^r and 2ⁿ
/// built in the exponent bits; 0 below [`EXP_FLUSH`], and NaN stays NaN. Operation by operation
/// over the lanes, so that the compiler keeps every step in vector registers.
#[inline(always)]
fn exp_lanes(x: &[f64; EXP_LANES]) -> [f64; EXP_LANES] {
    let mut n = [0.0; EXP_LANES];
    let mut r = [0.0; EXP_LANES];
    for l in 0..EXP_LANES {
        let xl = x[l].clamp(EXP_FLUSH, EXP_VECTOR_LIMIT);
        n[l] = (xl * std::f64::consts::LOG2_E).round_ties_even();
        r[l] = (-n[l]).mul_add(LN2_HI, xl);
        r[l] = (-n[l]).mul_add(LN2_LO, r[l]);
    }
    let mut p = [EXP_TAYLOR[0]; EXP_LANES];
    for &c in &EXP_TAYLOR[1..] {
        for l in 0..EXP_LANES {
            p[l] = p[l].mul_add(r[l], c);
        }
    }
    let mut u = [0.0; EXP_LANES];
    for l in 0..EXP_LANES {
        // 2ⁿ for −1022 ≤ n ≤ 1021: n from the low bits of n + 1.5·2⁵², then into the exponent
        let bits = (n[l] + ROUND_MAGIC)
            .to_bits()
            .wrapping_sub(ROUND_MAGIC.to_bits());
        let e = p[l] * f64::from_bits(bits.wrapping_add(1023) << 52);
        u[l] = if x[l] < EXP_FLUSH { 0.0 } else { e };
    }
    u
}

/// The logistic terms of [`EXP_LANES`] margins m:
/// (log(1 + e^{−m}), 1 / (1 + e^{m})). e^{−|m|} by [`exp_lanes`]; log(1 + u) for u = e^{−|m|} ∈ (0, 1] by 2 atanh(f / (2 + f)) with f = u, or
/// f = (u − 1)/2 and one ln 2 added for u ≥ 1/2 (both exact). Operation by operation over the
/// lanes, so that the compiler keeps every step in vector registers.
/// `SOFTPLUS` and `SIGMOID` say which of the two are wanted; the other is left zero.
#[inline(always)]
fn logistic_lanes<const SOFTPLUS: bool, const SIGMOID: bool>(
    m: &[f64; EXP_LANES],
) -> ([f64; EXP_LANES], [f64; EXP_LANES]) {
    let mut x = [0.0; EXP_LANES];
    for l in 0..EXP_LANES {
        x[l] = -m[l].abs();
    }
    let u = exp_lanes(&x);
    let (mut softplus, mut sigmoid) = ([0.0; EXP_LANES], [0.0; EXP_LANES]);
    if SOFTPLUS {
        let mut f = [0.0; EXP_LANES];
        let mut k = [0.0_f64; EXP_LANES];
        let mut sv = [0.0; EXP_LANES];
        let mut z = [0.0; EXP_LANES];
        for l in 0..EXP_LANES {
            let big = u[l] >= 0.5;
            f[l] = if big { (u[l] - 1.0) * 0.5 } else { u[l] };
            k[l] = if big { 1.0 } else { 0.0 };
            sv[l] = f[l] / (2.0 + f[l]);
            z[l] = sv[l] * sv[l];
        }
        let mut q = [ATANH_SERIES[0]; EXP_LANES];
        for &c in &ATANH_SERIES[1..] {
            for l in 0..EXP_LANES {
                q[l] = q[l].mul_add(z[l], c);
            }
        }
        for l in 0..EXP_LANES {
            let two_s = 2.0 * sv[l];
            let log1p = k[l].mul_add(
                LN2_HI,
                (two_s * z[l]).mul_add(q[l], k[l].mul_add(LN2_LO, two_s)),
            );
            softplus[l] = (-m[l]).max(0.0) + log1p;
        }
    }
    if SIGMOID {
        for l in 0..EXP_LANES {
            let num = if m[l] > 0.0 { u[l] } else { 1.0 };
            sigmoid[l] = num / (1.0 + u[l]);
        }
    }
    (softplus, sigmoid)
}

/// The portable body of [`logistic_terms`]: [`EXP_LANES`] at a time, the tail padded.
#[inline(always)]
fn logistic_body(m: &[f64], softplus: Option<&mut [f64]>, sigmoid: Option<&mut [f64]>) {
    match (softplus, sigmoid) {
        (Some(sp), Some(sg)) => logistic_chunks::<true, true>(m, sp, sg),
        (Some(sp), None) => logistic_chunks::<true, false>(m, sp, &mut []),
        (None, Some(sg)) => logistic_chunks::<false, true>(m, &mut [], sg),
        (None, None) => {}
    }
}

/// [`logistic_body`] for one choice of outputs (an unwanted one is an empty slice): whole
/// arrays of [`EXP_LANES`], so that loads and stores stay vector-wide, then the tail padded.
#[inline(always)]
fn logistic_chunks<const SOFTPLUS: bool, const SIGMOID: bool>(
    m: &[f64],
    softplus: &mut [f64],
    sigmoid: &mut [f64],
) {
    let whole = m.len() - m.len() % EXP_LANES;
    for start in (0..whole).step_by(EXP_LANES) {
        let range = start..start + EXP_LANES;
        let lanes: [f64; EXP_LANES] = m[range.clone()].try_into().unwrap_or([0.0; EXP_LANES]);
        let (sp, sg) = logistic_lanes::<SOFTPLUS, SIGMOID>(&lanes);
        if SOFTPLUS {
            softplus[range.clone()].copy_from_slice(&sp);
        }
        if SIGMOID {
            sigmoid[range].copy_from_slice(&sg);
        }
    }
    let rest = m.len() - whole;
    if rest > 0 {
        let mut lanes = [0.0; EXP_LANES];
        lanes[..rest].copy_from_slice(&m[whole..]);
        let (sp, sg) = logistic_lanes::<SOFTPLUS, SIGMOID>(&lanes);
        if SOFTPLUS {
            softplus[whole..].copy_from_slice(&sp[..rest]);
        }
        if SIGMOID {
            sigmoid[whole..].copy_from_slice(&sg[..rest]);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn logistic_body_fma(m: &[f64], softplus: Option<&mut [f64]>, sigmoid: Option<&mut [f64]>) {
    logistic_body(m, softplus, sigmoid);
}

/// The body of [`exp_in_place`]: [`EXP_LANES`] at a time (whole arrays, so that loads and
/// stores stay vector-wide), then the tail padded; the rare arguments above the vector path's
/// range (and NaN) by libm, from the chunk's original values.
#[inline(always)]
fn exp_body(x: &mut [f64]) {
    let mut chunks = x.chunks_exact_mut(EXP_LANES);
    for chunk in &mut chunks {
        let args: [f64; EXP_LANES] = (&*chunk).try_into().unwrap_or([0.0; EXP_LANES]);
        chunk.copy_from_slice(&exp_lanes(&args));
        exp_beyond_range(chunk, &args);
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let mut args = [0.0; EXP_LANES];
        args[..rest.len()].copy_from_slice(rest);
        rest.copy_from_slice(&exp_lanes(&args)[..rest.len()]);
        exp_beyond_range(rest, &args[..rest.len()]);
    }
}

/// `out[i] = e^{args[i]}` by libm where the argument is beyond [`exp_lanes`]' range or NaN
/// (one branch-free test for the whole chunk first).
#[inline(always)]
fn exp_beyond_range(out: &mut [f64], args: &[f64]) {
    let outside = |a: f64| a.is_nan() || a > EXP_VECTOR_LIMIT;
    if args.iter().fold(false, |any, &a| any | outside(a)) {
        for (o, &a) in out.iter_mut().zip(args) {
            if outside(a) {
                *o = a.exp();
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn exp_body_fma(x: &mut [f64]) {
    exp_body(x);
}

/// `x[i] ← e^{x[i]}`, vectorised (AVX2 + FMA where the CPU has them, picked at run time): the
/// RBF kernel blocks' exponential. The arithmetic of [`logistic_terms`]' e^{−|m|} on the whole
/// range up to x = 708: within 2 units in the last place of libm's (a test checks), the same bits
/// on every CPU (the portable path computes the same fused operations with `f64::mul_add`);
/// above 708 and NaN by libm's `exp`. Subnormal results (x < ln 2^{−1022} ≈ −708.40) are
/// returned as 0: an absolute error below 2.3·10⁻³⁰⁸ that keeps subnormal operands, each a
/// microcode assist, out of the products that use the result.
///
/// ```
/// use gimc_linalg::simd::exp_in_place;
///
/// let mut x = [-2.0, 0.0, 0.5, -1000.0];
/// exp_in_place(&mut x);
/// assert!((x[0] - (-2.0f64).exp()).abs() < 1e-16 && x[1] == 1.0 && x[3] == 0.0);
/// ```
pub fn exp_in_place(x: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only
            // requirement of the `target_feature` function.
            #[allow(unsafe_code)]
            unsafe {
                exp_body_fma(x);
            }
            return;
        }
    }
    exp_body(x);
}

/// For margins m_i: `softplus[i] = log(1 + e^{−m_i})` (the logistic loss) and `sigmoid[i] =
/// 1 / (1 + e^{m_i})` (minus its derivative), either optional: the label terms of the
/// transduction loss, vectorised (AVX2 + FMA where the CPU has them, picked at run time).
/// Computed from u = e^{−|m|} as max(−m, 0) + log1p(u) and (m > 0 ? u : 1) / (1 + u), the
/// formulas of the scalar loss, with e^{−|m|} and log1p by polynomials on reduced arguments
/// instead of libm: within 2 units in the last place of libm's (a test checks), the same bits
/// on every CPU (the portable path computes the same fused operations with `f64::mul_add`). NaN margins give NaN, ±∞ the limits; a subnormal e^{−|m|} (|m| > 708.4)
/// counts as 0, as in [`exp_in_place`].
///
/// ```
/// use gimc_linalg::simd::logistic_terms;
///
/// let m = [-3.0, 0.0, 0.5, 40.0];
/// let (mut loss, mut sig) = ([0.0; 4], [0.0; 4]);
/// logistic_terms(&m, Some(&mut loss), Some(&mut sig));
/// for i in 0..4 {
///     assert!((loss[i] - (-m[i]).exp().ln_1p()).abs() < 1e-15);
///     assert!((sig[i] - 1.0 / (1.0 + m[i].exp())).abs() < 1e-15);
/// }
/// ```
///
/// # Panics
/// If an output slice differs in length from `margins`.
pub fn logistic_terms(margins: &[f64], softplus: Option<&mut [f64]>, sigmoid: Option<&mut [f64]>) {
    let n = margins.len();
    assert!(
        softplus.as_ref().is_none_or(|s| s.len() == n)
            && sigmoid.as_ref().is_none_or(|s| s.len() == n),
        "logistic_terms: slices of different lengths"
    );
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only
            // requirement of the `target_feature` function.
            #[allow(unsafe_code)]
            unsafe {
                logistic_body_fma(margins, softplus, sigmoid);
            }
            return;
        }
    }
    logistic_body(margins, softplus, sigmoid);
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::linalg::matmul::matmul;
    use faer::{Accum, Mat, Par};

    #[test]
    fn clearing_after_a_gemm_changes_no_value() {
        let a = Mat::<f64>::from_fn(64, 200, |i, j| ((i * 7 + j) as f64 * 0.01).sin());
        let mut g = Mat::<f64>::zeros(64, 64);
        let loss = |g: &Mat<f64>| -> f64 {
            (0..g.nrows())
                .map(|i| (-g[(i, i)].abs()).exp().ln_1p() + g[(i, 0)].sin())
                .sum()
        };
        matmul(
            g.as_mut(),
            Accum::Replace,
            a.as_ref(),
            a.transpose(),
            1.0,
            Par::Seq,
        );
        // the loss right after the GEMM (dirty state), then again after clearing
        let dirty = loss(&g);
        clear_upper_state();
        let clean = loss(&g);
        assert_eq!(dirty.to_bits(), clean.to_bits());
        assert!(clean.is_finite() && clean > 0.0);
    }

    /// The vectorised sin / cos agree with libm to rounding level over small, moderate and
    /// large arguments, near multiples of π/2 and at the special values.
    #[test]
    fn sin_cos_into_matches_libm() {
        use rand::Rng;
        let mut rng = crate::rng::seeded(11);
        let mut x: Vec<f64> = Vec::new();
        for scale in [1e-8, 1e-3, 0.5, 1.0, 4.0, 30.0, 1e3, 1e6, 5e7] {
            x.extend((0..2000).map(|_| scale * rng.random_range(-1.0..1.0)));
        }
        // near the quadrant boundaries and the reduction limit
        x.extend((0..400).map(|k| (k as f64 - 200.0) * std::f64::consts::FRAC_PI_2));
        x.extend([0.0, -0.0, 1e-300, 2e8, -3e9, 1e300, f64::MIN_POSITIVE]);
        let (mut s, mut c) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        sin_cos_into(&x, 1.0, &mut s, &mut c);
        for (i, &v) in x.iter().enumerate() {
            let (ls, lc) = v.sin_cos();
            assert!(
                (s[i] - ls).abs() <= 4e-16,
                "sin({v:e}) = {} against libm {ls}",
                s[i]
            );
            assert!(
                (c[i] - lc).abs() <= 4e-16,
                "cos({v:e}) = {} against libm {lc}",
                c[i]
            );
        }
        // a scale multiplies both; NaN and ±∞ give NaN as libm does
        let y = [0.7, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        let (mut s, mut c) = ([0.0; 4], [0.0; 4]);
        sin_cos_into(&y, 0.25, &mut s, &mut c);
        assert_eq!(s[0], sin_cos_lanes(&[0.7; 4], 0.25).0[0]);
        assert!((s[0] - 0.25 * 0.7f64.sin()).abs() < 1e-16);
        assert!(s[1..].iter().chain(&c[1..]).all(|v| v.is_nan()));
    }

    /// The dispatched (AVX2 + FMA) path and the portable one give the same bits.
    #[test]
    fn sin_cos_paths_agree_bitwise() {
        let x: Vec<f64> = (0..1003).map(|k| (k as f64 - 500.0) * 0.37).collect();
        let (mut s1, mut c1) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        let (mut s2, mut c2) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        sin_cos_into(&x, 0.1, &mut s1, &mut c1);
        sin_cos_body(&x, 0.1, &mut s2, &mut c2);
        for i in 0..x.len() {
            assert_eq!(s1[i].to_bits(), s2[i].to_bits());
            assert_eq!(c1[i].to_bits(), c2[i].to_bits());
        }
    }

    /// The vectorised logistic terms agree with libm's formulas to a few units in the last
    /// place over small, moderate and extreme margins, and at the special values.
    #[test]
    fn logistic_terms_match_libm() {
        use rand::Rng;
        let mut rng = crate::rng::seeded(12);
        let mut m: Vec<f64> = Vec::new();
        for scale in [1e-12, 1e-4, 0.1, 0.7, 1.0, 3.0, 20.0, 300.0, 708.0] {
            m.extend((0..3000).map(|_| scale * rng.random_range(-1.0..1.0)));
        }
        // where u = e^{−|m|} crosses 1/2 (the log1p branch), and the vector path's limit
        let ln2 = std::f64::consts::LN_2;
        m.extend((0..200).map(|k| ln2 + (k as f64 - 100.0) * 1e-15));
        m.extend([
            0.0, -0.0, 708.0, -708.0, 708.5, -745.0, 800.0, -1e300, 1e-320,
        ]);
        let (mut sp, mut sg) = (vec![0.0; m.len()], vec![0.0; m.len()]);
        logistic_terms(&m, Some(&mut sp), Some(&mut sg));
        let ulps = |a: f64, b: f64| (a - b).abs() / (f64::EPSILON * b.abs().max(f64::MIN_POSITIVE));
        for (i, &v) in m.iter().enumerate() {
            let u = if -v.abs() < EXP_FLUSH {
                0.0
            } else {
                (-v.abs()).exp()
            };
            let want_sp = (-v).max(0.0) + u.ln_1p();
            let want_sg = if v > 0.0 { u } else { 1.0 } / (1.0 + u);
            assert!(
                ulps(sp[i], want_sp) <= 4.0,
                "softplus({v:e}) = {} against {want_sp}",
                sp[i]
            );
            assert!(
                ulps(sg[i], want_sg) <= 4.0,
                "sigmoid({v:e}) = {} against {want_sg}",
                sg[i]
            );
        }
        assert_eq!((sp[m.len() - 9], sg[m.len() - 9]), (2f64.ln(), 0.5));
        // either output alone gives the same values; NaN stays NaN; ±∞ saturate
        let mut only = vec![0.0; m.len()];
        logistic_terms(&m, None, Some(&mut only));
        assert_eq!(only, sg);
        let z = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        let (mut sp, mut sg) = ([0.0; 3], [0.0; 3]);
        logistic_terms(&z, Some(&mut sp), Some(&mut sg));
        assert!(sp[0].is_nan() && sg[0].is_nan());
        assert_eq!((sp[1], sg[1]), (0.0, 0.0));
        assert_eq!((sp[2], sg[2]), (f64::INFINITY, 1.0));
    }

    /// The vectorised e^x agrees with libm to 2 units in the last place over the vector path's
    /// range, both paths give the same bits, and the edges go to libm.
    #[test]
    fn exp_in_place_matches_libm() {
        use rand::Rng;
        let mut rng = crate::rng::seeded(13);
        let mut x: Vec<f64> = Vec::new();
        for scale in [1e-10, 0.01, 0.34, 1.0, 5.0, 50.0, 700.0] {
            x.extend((0..3000).map(|_| scale * rng.random_range(-1.0..1.0)));
        }
        x.extend((0..400).map(|k| -700.0 - 0.12 * k as f64));
        x.extend([
            0.0, -0.0, 708.0, -708.0, 709.0, -745.0, -745.13, -745.2, -746.0, 1e300, -1e300,
        ]);
        let mut got = x.clone();
        exp_in_place(&mut got);
        let mut portable = x.clone();
        exp_body(&mut portable);
        for (i, &v) in x.iter().enumerate() {
            // subnormal results are flushed to zero
            let want = if v < EXP_FLUSH { 0.0 } else { v.exp() };
            let ulps = (got[i] - want).abs() / (f64::EPSILON * want.abs().max(f64::MIN_POSITIVE));
            assert!(
                got[i] == want || ulps <= 2.0,
                "exp({v:e}) = {} against libm {want}",
                got[i]
            );
            assert_eq!(got[i].to_bits(), portable[i].to_bits());
        }
        let mut special = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0];
        exp_in_place(&mut special);
        assert!(special[0].is_nan());
        assert_eq!(special[1..], [f64::INFINITY, 0.0, 1.0]);
    }

    /// The dispatched (AVX2 + FMA) path and the portable one give the same bits.
    #[test]
    fn logistic_paths_agree_bitwise() {
        let m: Vec<f64> = (0..1003).map(|k| (k as f64 - 500.0) * 0.137).collect();
        let (mut s1, mut g1) = (vec![0.0; m.len()], vec![0.0; m.len()]);
        let (mut s2, mut g2) = (vec![0.0; m.len()], vec![0.0; m.len()]);
        logistic_terms(&m, Some(&mut s1), Some(&mut g1));
        logistic_body(&m, Some(&mut s2), Some(&mut g2));
        for i in 0..m.len() {
            assert_eq!(s1[i].to_bits(), s2[i].to_bits());
            assert_eq!(g1[i].to_bits(), g2[i].to_bits());
        }
    }

    /// A loop run through `with_avx2` (4 lanes wide on this CPU) gives the same bits as the
    /// same loop compiled for baseline x86-64: products and sums of four terms, the shape of
    /// the per-line Gram kernels that use it, with values whose rounding is not exact.
    #[test]
    fn with_avx2_keeps_the_bits() {
        let q: Vec<Vec<f64>> = (0..4)
            .map(|t| {
                (0..37)
                    .map(|c| ((c * 7 + t * 3) as f64).sin() * 1.3e-3)
                    .collect()
            })
            .collect();
        let kernel = |g: &mut [f64]| {
            for _ in 0..5 {
                for (c, g) in g.iter_mut().enumerate() {
                    *g += 0.7 * q[0][c] + 1.1 * q[1][c] + 0.3 * q[2][c] + 2.9 * q[3][c];
                }
            }
        };
        let (mut plain, mut wide) = (vec![0.1; 37], vec![0.1; 37]);
        kernel(&mut plain);
        with_avx2(|| kernel(&mut wide));
        for (a, b) in plain.iter().zip(&wide) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }
}
