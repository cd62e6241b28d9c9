//! Extreme-multi-label (XMC) scale synthetic data, streamed to the Extreme Classification
//! Repository text format row by row.
//!
//! ```
//! use std::path::Path;
//!
//! use gimc_data::parse_xmc;
//! use gimc_data::synth_xmc::{XmcSynthParams, write_xmc_synth};
//! use gimc_linalg::rng::seeded;
//!
//! // 500 rows of a 2,000-feature, 300-label problem, about 40 non-zeros and 3 labels per row.
//! let params = XmcSynthParams::default()
//!     .with_rows(500)
//!     .with_features(2_000)
//!     .with_labels(300)
//!     .with_nnz_per_row(40.0)
//!     .with_labels_per_row(3.0)
//!     .check()?;
//! let mut text = Vec::new();
//! let summary = write_xmc_synth(&params, &mut seeded(7), &mut text)?;
//! assert_eq!((summary.rows, summary.bytes), (500, text.len() as u64));
//! assert!((summary.mean_labels_per_row - 3.0).abs() < 0.5);
//!
//! // The output is what `parse_xmc` / `read_xmc` (and `gimc data info`) read.
//! let data = parse_xmc(text.as_slice(), Path::new("synth.txt"))?;
//! assert_eq!((data.nrows(), data.ncols()), (500, 2_000));
//! assert_eq!(data.features.nnz(), summary.nnz);
//! assert_eq!(data.summary().rows_without_label, Some(0));
//!
//! // Presets carry the published statistics of real XMC sets; override what you need.
//! let amazon = XmcSynthParams::preset("amazoncat-13k")?;
//! assert_eq!((amazon.rows, amazon.features, amazon.labels), (1_186_239, 203_882, 13_330));
//! assert!(XmcSynthParams::preset("amazon").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The model
//!
//! Sizes: n rows, d features, L labels, latent dimension r; μ_f and μ_L the requested mean
//! non-zeros and labels per row; s_f and s_L the Zipf exponents. Fixed constants: topic and
//! label concentrations κ_f = 4·√r and κ_L = 10·√r, spread τ = ½, topical share ρ = ½, prior
//! share η = 0.1, M = 2 modes per label. Unit vectors throughout: for ‖z‖ = ‖c‖ = 1 the RBF
//! similarity is exp(−κ‖z − c‖²/2) = exp(κ(zᵀc − 1)); cosines of random unit vectors have
//! standard deviation 1/√r, so κ = β·√r spreads log-similarities over about β units.
//!
//! **Priors.** Feature j has the Zipf weight p_j ∝ (j + 1)^(−s_f), label l the weight
//! π_l ∝ (l + 1)^(−s_L): index 0 is the most frequent.
//!
//! **Planted structure**, drawn once, in this order. Features are dealt round-robin into
//! T = ⌈√d⌉ topics: feature j is member k = ⌊j / T⌋ of topic j mod T. Topic t has a centre
//! v_t = g/‖g‖, g ~ N(0, I_r), and feature j the latent vector a_j = normalise(v_(j mod T) + τ·ξ_j),
//! ξ_j ~ N(0, I_r / r). Labels are dealt likewise into K = ⌈√L⌉ groups (label l is member
//! ⌊l / K⌋ of group l mod K); group g has M unit modes u_(g,1..M), and label l of group g the
//! modes c_(l,m) = normalise(u_(g,m) + τ·ξ). Memory O(d·r + L·M·r), independent of n.
//!
//! **Features of row i.** A count n_i = min(d, 1 + ⌊(μ_f − 1)·G + U⌋) with G ~ Gamma(2, ½)
//! (mean 1) and U ~ Uniform[0, 1), so E n_i = μ_f unless the cap d binds. A topic direction
//! θ_i uniform on the unit sphere. Then n_i distinct features, each draw being *topical* with
//! probability ρ (topic t ∝ exp(κ_f(v_tᵀθ_i − 1)), then its member k ∝ (k + 1)^(−s_f)) and
//! otherwise *background* (j ∝ p_j). A feature already in the row is redrawn; should a row ask
//! for nearly all the probability mass, so that redraws exceed 16·n_i + 64, the rest of it is
//! completed by exact weighted sampling without replacement from p (Efraimidis–Spirakis). Rows
//! on nearby topics share features, and feature frequencies are heavy-tailed: a mixture of the
//! Zipf law p and a Zipf law in the member rank ⌊j / T⌋. Values are tf-idf-like,
//! x_ij = (1 + ln(1 + c_ij))·ln(1 + 1/(μ_f·q_j)), c_ij ~ Geometric(½) on {0, 1, …}, with q_j
//! the approximate frequency of feature j = t + kT,
//! q_j = (ρ/T)·(k + 1)^(−s_f) / Σ_(k' < |t|) (k' + 1)^(−s_f) + (1 − ρ)·p_j (p normalised).
//! Every row is then scaled to unit L2 norm and written with 6 decimals (a value below
//! 0.0000005 is written 0.000001, never 0).
//!
//! **Labels of row i.** The row's latent point is z_i = y_i / ‖y_i‖, y_i = Σ_j x_ij·a_j. A count
//! m_i = min(L, 1 + ⌊(μ_L − 1)·G' + U'⌋) (so every row has at least one label), then m_i
//! distinct labels (redrawn, and completed from π, as for features), each draw being with
//! probability η from the prior π (popular labels, whatever the row) and otherwise from the
//! planted label tree:
//!
//! P(g | z) ∝ (1/M)·Σ_m exp(κ_L(zᵀu_(g,m) − 1)),
//! P(l = g + kK | g, z) ∝ (k + 1)^(−s_L)·(1/M)·Σ_m exp(κ_L(zᵀc_(l,m) − 1)).
//!
//! Apart from the η share, the labels depend on the features only through z, and
//! nonlinearly: z is a normalised projection of x, every group is attracted by M = 2 unrelated
//! regions of the sphere (a mixture of RBF bumps), and at κ_L = 10·√r the tree nearly assigns z
//! to its nearest modes, which a linear score of x cannot mimic; a kernel map of x learned along
//! the projection (the a_j) can. Weights are computed in log space with the maximum subtracted.
//!
//! Measured (a few thousand rows; amazoncat-13k's shape: 100,000 rows): knowing z, the most
//! probable label is among the row's labels for about 85 % of the rows with eurlex-4k's shape
//! and 82 % with amazoncat-13k's, while the most frequent label is among them for 17 % and 14 %.
//! The most frequent 1 % of the features carry 14 % (eurlex-4k) and 49 % (amazoncat-13k) of the
//! non-zeros, the most frequent 1 % of the labels about 19 % of the row–label pairs.
//!
//! Cost: O(μ_f·(log d + r) + √d·r + √L·M·r·(1 + groups visited)) per row; the writer holds one
//! row at a time. Every random draw comes from the [`GimcRng`] passed in, in a fixed order
//! (the planted structure, then row by row), so a seed gives byte-identical output and the
//! first k rows do not depend on the requested row count.

use std::io::Write;

use gimc_linalg::dense::dot;
use gimc_linalg::rng::{GimcRng, gaussian_vec};
use rand::Rng;

use crate::error::{check_nonzero, param_err};
use crate::{DataError, Result};

/// Concentration of the topic similarities, κ_f = BETA_TOPIC·√r.
const BETA_TOPIC: f64 = 4.0;
/// Concentration of the label similarities, κ_L = BETA_LABEL·√r.
const BETA_LABEL: f64 = 10.0;
/// Spread τ of a feature's latent vector around its topic centre, and of a label's modes
/// around its group's.
const TAU: f64 = 0.5;
/// Share ρ of a row's feature draws that come from its topics (the rest: the Zipf prior).
const TOPICAL: f64 = 0.5;
/// Share η of a row's label draws that come from the Zipf prior alone (the rest: the planted
/// label tree).
const PRIOR_SHARE: f64 = 0.1;
/// Modes M of every label group (and label).
const MODES: usize = 2;
/// Decimals of the written feature values.
const DECIMALS: u32 = 6;

/// The presets: name, rows, features, labels, non-zeros per row, labels per row.
const PRESETS: [(&str, usize, usize, usize, f64, f64); 3] = [
    ("amazoncat-13k", 1_186_239, 203_882, 13_330, 71.2, 5.04),
    ("eurlex-4k", 15_539, 5_000, 3_993, 236.8, 5.31),
    ("wiki10-31k", 14_146, 101_938, 30_938, 673.4, 18.64),
];

/// The preset names of [`XmcSynthParams::preset`].
pub const PRESET_NAMES: [&str; 3] = [PRESETS[0].0, PRESETS[1].0, PRESETS[2].0];

gimc_linalg::params! {
    /// Parameters of the XMC generator (model in the [module docs](self)). Start from
    /// [`XmcSynthParams::default`] or [`XmcSynthParams::preset`] and the `with_*` methods;
    /// [`XmcSynthParams::check`] validates them into the [`ValidXmcSynthParams`] that
    /// [`write_xmc_synth`] takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct XmcSynthParams => ValidXmcSynthParams {
        /// Rows n. Default 10,000.
        pub rows: usize = 10_000 => with_rows,
        /// Features d. Default 10,000.
        pub features: usize = 10_000 => with_features,
        /// Labels L. Default 1,000.
        pub labels: usize = 1_000 => with_labels,
        /// Mean non-zeros per row, in [1, features]. Default 50. Row counts are capped at
        /// `features`, which lowers a mean close to it.
        pub nnz_per_row: f64 = 50.0 => with_nnz_per_row,
        /// Mean labels per row, in [1, labels]. Default 5. Capped at `labels` like `nnz_per_row`.
        pub labels_per_row: f64 = 5.0 => with_labels_per_row,
        /// Zipf exponent of the feature frequencies (p_j ∝ (j + 1)^(−s)). Default 1.1.
        pub feature_exponent: f64 = 1.1 => with_feature_exponent,
        /// Zipf exponent of the label frequencies. Default 1.1.
        pub label_exponent: f64 = 1.1 => with_label_exponent,
        /// Dimension r of the planted latent space. Default 32.
        pub latent: usize = 32 => with_latent,
    }
    /// Checks every field: positive sizes, `nnz_per_row` in [1, `features`], `labels_per_row`
    /// in [1, `labels`] (every row has at least one of each), finite positive exponents, and a
    /// planted model whose size fits in memory addressing.
    check |this| -> crate::DataError {
        for (name, v) in [
            ("rows", this.rows),
            ("features", this.features),
            ("labels", this.labels),
            ("latent", this.latent),
        ] {
            check_nonzero(name, v)?;
        }
        for (name, mean, max, what) in [
            ("nnz_per_row", this.nnz_per_row, this.features, "features"),
            ("labels_per_row", this.labels_per_row, this.labels, "labels"),
        ] {
            if !(mean.is_finite() && mean >= 1.0 && mean <= max as f64) {
                return Err(param_err(
                    name,
                    format!("{mean} is not in [1, {max}] (1 to the number of {what})"),
                ));
            }
        }
        for (name, s) in [
            ("feature_exponent", this.feature_exponent),
            ("label_exponent", this.label_exponent),
        ] {
            if !(s.is_finite() && s > 0.0) {
                return Err(param_err(
                    name,
                    format!("{s} is not a finite positive exponent"),
                ));
            }
        }
        if model_floats(this).is_none_or(|f| f > isize::MAX as usize / 8) {
            return Err(param_err(
                "latent",
                format!(
                    "the planted model ({} features and {} labels in {} latent dimensions) is \
                     too large to address",
                    this.features, this.labels, this.latent
                ),
            ));
        }
    }
}

impl XmcSynthParams {
    /// The shape and per-row means of a real set of the Extreme Classification Repository (its
    /// training split), other fields at their defaults: `amazoncat-13k` (1,186,239 × 203,882,
    /// 13,330 labels, 71.2 non-zeros and 5.04 labels per row), `eurlex-4k` (15,539 × 5,000,
    /// 3,993 labels, 236.8 and 5.31) and `wiki10-31k` (14,146 × 101,938, 30,938 labels, 673.4
    /// and 18.64). Case-insensitive; an unknown name is an error listing the known ones.
    pub fn preset(name: &str) -> Result<Self> {
        let key = name.trim().to_ascii_lowercase();
        let &(_, rows, features, labels, nnz_per_row, labels_per_row) =
            PRESETS.iter().find(|p| p.0 == key).ok_or_else(|| {
                param_err::<DataError>(
                    "preset",
                    format!(
                        "unknown preset {name:?} (known: {})",
                        PRESET_NAMES.join(", ")
                    ),
                )
            })?;
        Ok(Self {
            rows,
            features,
            labels,
            nnz_per_row,
            labels_per_row,
            ..Self::default()
        })
    }
}

/// Numbers held by the planted model (`None` on overflow).
fn model_floats(p: &XmcSynthParams) -> Option<usize> {
    let features = p.features.checked_mul(p.latent.checked_add(4)?)?;
    let labels = p
        .labels
        .checked_mul(p.latent.checked_mul(MODES)?.checked_add(4)?)?;
    features.checked_add(labels)
}

/// What [`write_xmc_synth`] wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XmcSynthSummary {
    /// Rows written.
    pub rows: usize,
    /// Features (columns) of the header.
    pub features: usize,
    /// Labels of the header.
    pub labels: usize,
    /// Feature non-zeros written.
    pub nnz: usize,
    /// Row–label pairs written.
    pub label_nnz: usize,
    /// Bytes written.
    pub bytes: u64,
    /// `nnz / rows`.
    pub mean_nnz_per_row: f64,
    /// `label_nnz / rows`.
    pub mean_labels_per_row: f64,
}

/// Writes `params.rows` rows of the [model](self) in the Extreme Classification Repository text
/// format: the header `rows features labels`, then one row per line, `l1,l2,... f1:v1 f2:v2 ...`
/// with 0-based indices in increasing order (what [`crate::parse_xmc`] reads). Rows are
/// generated and written one at a time (memory O(d·r + L·r), independent of the row count);
/// pass a buffered writer. Every random draw comes from `rng`.
///
/// Errors: write failures as [`DataError::Io`] (path `<output>`); the parameters were checked
/// by [`XmcSynthParams::check`].
pub fn write_xmc_synth<W: Write>(
    params: &ValidXmcSynthParams,
    rng: &mut GimcRng,
    mut out: W,
) -> Result<XmcSynthSummary> {
    let model = Model::new(params, rng)?;
    let mut row = RowScratch::new(&model);
    let mut line = Vec::with_capacity(64);
    let io_err = |source| DataError::Io {
        path: "<output>".into(),
        source,
    };
    let mut bytes = 0u64;
    let header = format!("{} {} {}\n", params.rows, params.features, params.labels);
    out.write_all(header.as_bytes()).map_err(io_err)?;
    bytes += header.len() as u64;
    let (mut nnz, mut label_nnz) = (0usize, 0usize);
    for _ in 0..params.rows {
        model.sample_row(rng, &mut row);
        line.clear();
        format_row(&row, &mut line);
        out.write_all(&line).map_err(io_err)?;
        bytes += line.len() as u64;
        nnz += row.entries.len();
        label_nnz += row.labels.len();
    }
    out.flush().map_err(io_err)?;
    let n = params.rows as f64;
    Ok(XmcSynthSummary {
        rows: params.rows,
        features: params.features,
        labels: params.labels,
        nnz,
        label_nnz,
        bytes,
        mean_nnz_per_row: nnz as f64 / n,
        mean_labels_per_row: label_nnz as f64 / n,
    })
}

/// One row as text: `l1,l2,... f:v f:v\n`, labels and features in increasing order.
fn format_row(row: &RowScratch, line: &mut Vec<u8>) {
    let scale = 10u64.pow(DECIMALS);
    for (k, &l) in row.labels.iter().enumerate() {
        if k > 0 {
            line.push(b',');
        }
        push_uint(line, l as u64);
    }
    for &(j, v) in &row.entries {
        line.push(b' ');
        push_uint(line, j as u64);
        line.push(b':');
        // v in (0, 1]: fixed decimals, never 0 (the reader would drop a stored zero)
        let q = ((v * scale as f64).round() as u64).max(1);
        push_uint(line, q / scale);
        line.push(b'.');
        let frac = q % scale;
        let mut digits = [b'0'; DECIMALS as usize];
        let mut f = frac;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (f % 10) as u8;
            f /= 10;
        }
        line.extend_from_slice(&digits);
    }
    line.push(b'\n');
}

fn push_uint(line: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    line.extend_from_slice(&buf[i..]);
}

/// ⌈√n⌉ for n ≥ 1.
fn ceil_sqrt(n: usize) -> usize {
    let s = n.isqrt();
    if s * s == n { s } else { s + 1 }
}

/// Scales `v` to unit norm (left as is when zero).
fn normalise(v: &mut [f64]) {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// An empty vector with room for `len` numbers, or an error naming the model's size.
fn reserve(len: usize) -> Result<Vec<f64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        param_err::<DataError>(
            "latent",
            format!("cannot allocate the planted model ({len} numbers)"),
        )
    })?;
    Ok(v)
}

/// `count` unit vectors of dimension `r` (normalised N(0, I_r) draws), row-major.
fn unit_vectors(rng: &mut GimcRng, count: usize, r: usize) -> Result<Vec<f64>> {
    let mut out = reserve(count * r)?;
    for _ in 0..count {
        let mut g = gaussian_vec(rng, r, 1.0);
        normalise(&mut g);
        out.extend_from_slice(&g);
    }
    Ok(out)
}

/// For each of `count` members i, in order, the unit vector normalise(v + τ·ξ), ξ ~ N(0, I_r / r),
/// with v the vector `centre(i)` of `centres`; row-major.
fn members_around(
    rng: &mut GimcRng,
    count: usize,
    r: usize,
    centre: impl Fn(usize) -> usize,
    centres: &[f64],
) -> Result<Vec<f64>> {
    let mut out = reserve(count * r)?;
    let std = TAU / (r as f64).sqrt();
    for i in 0..count {
        let mut v = gaussian_vec(rng, r, std);
        let c = &centres[centre(i) * r..][..r];
        v.iter_mut().zip(c).for_each(|(x, c)| *x += c);
        normalise(&mut v);
        out.extend_from_slice(&v);
    }
    Ok(out)
}

/// Size of part `g` when `n` items are dealt round-robin into `k` parts.
fn part_size(g: usize, k: usize, n: usize) -> usize {
    (n - g).div_ceil(k)
}

/// Offset of part `g` in the part-major layout of `n` items dealt round-robin into `k` parts.
fn part_offset(g: usize, k: usize, n: usize) -> usize {
    g * (n / k) + g.min(n % k)
}

/// Zipf weights (j + 1)^(−s), j < len: cumulative sums and logs.
fn zipf(len: usize, s: f64) -> (Vec<f64>, Vec<f64>) {
    let logw: Vec<f64> = (0..len).map(|j| -s * ((j + 1) as f64).ln()).collect();
    let mut acc = 0.0;
    let cdf = logw
        .iter()
        .map(|&lw| {
            acc += lw.exp();
            acc
        })
        .collect();
    (cdf, logw)
}

/// Weight of entry `k` of a cumulative array.
fn weight(cdf: &[f64], k: usize) -> f64 {
    if k == 0 { cdf[0] } else { cdf[k] - cdf[k - 1] }
}

/// Turns log weights into cumulative weights in place (maximum subtracted, so the largest
/// weight is 1).
fn cumulate_logs(w: &mut [f64]) {
    let max = w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut acc = 0.0;
    for x in w {
        acc += (*x - max).exp();
        *x = acc;
    }
}

/// The index of a draw from cumulative weights `cdf` (binary search), with `u` uniform in
/// [0, 1).
fn search(cdf: &[f64], u: f64) -> usize {
    let total = cdf.last().copied().unwrap_or(0.0);
    cdf.partition_point(|&c| c <= u * total)
        .min(cdf.len().saturating_sub(1))
}

/// min(max, 1 + ⌊(mean − 1)·G + U⌋), G ~ Gamma(2, ½) = −ln(U₁U₂)/2, U ~ Uniform[0, 1).
fn draw_count(mean: f64, max: usize, rng: &mut GimcRng) -> usize {
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = 1.0 - rng.random::<f64>();
    let g = -(u1 * u2).ln() / 2.0;
    let u: f64 = rng.random();
    let c = 1.0 + ((mean - 1.0) * g + u).floor();
    if c >= max as f64 { max } else { c as usize }
}

/// Adds to `chosen` until it holds `n` distinct items of `0..seen.len()`, drawing with `draw`
/// and redrawing items already `seen`; after 16·n + 64 redraws, completes it by weighted
/// sampling without replacement from the log weights `logw` (Efraimidis–Spirakis: the
/// smallest keys ln E − logw, E ~ Exp(1)). Marks the chosen items in `seen`.
fn draw_distinct(
    n: usize,
    seen: &mut [bool],
    chosen: &mut Vec<usize>,
    keys: &mut Vec<(f64, usize)>,
    logw: &[f64],
    rng: &mut GimcRng,
    mut draw: impl FnMut(&mut GimcRng) -> usize,
) {
    let budget = 16 * n + 64;
    let mut redraws = 0;
    while chosen.len() < n {
        let j = draw(rng);
        if !seen[j] {
            seen[j] = true;
            chosen.push(j);
            continue;
        }
        redraws += 1;
        if redraws > budget {
            let need = n - chosen.len();
            keys.clear();
            for (j, &lw) in logw.iter().enumerate() {
                if !seen[j] {
                    let e = -(1.0 - rng.random::<f64>()).ln();
                    keys.push((e.ln() - lw, j));
                }
            }
            if need < keys.len() {
                keys.select_nth_unstable_by(need, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            }
            for &(_, j) in keys.iter().take(need) {
                seen[j] = true;
                chosen.push(j);
            }
            return;
        }
    }
}

/// The planted model (module docs).
struct Model {
    d: usize,
    l: usize,
    r: usize,
    mu_f: f64,
    mu_l: f64,
    kappa_f: f64,
    kappa_l: f64,
    /// Cumulative Zipf weights over features, and their logs.
    feature_cdf: Vec<f64>,
    feature_logw: Vec<f64>,
    /// ln(1 + 1/(μ_f q_j)).
    idf: Vec<f64>,
    /// Topics T; cumulative Zipf weights over a topic's member ranks; centres v (T × r).
    topics: usize,
    topic_member_cdf: Vec<f64>,
    topic_centres: Vec<f64>,
    /// a_j, d × r row-major.
    feature_vecs: Vec<f64>,
    /// Cumulative Zipf weights over labels, and their logs.
    label_cdf: Vec<f64>,
    label_logw: Vec<f64>,
    /// Label groups K; log Zipf weights over a group's member ranks; modes u (K × M × r).
    groups: usize,
    group_member_logw: Vec<f64>,
    group_modes: Vec<f64>,
    /// Label modes c (L × M × r).
    label_modes: Vec<f64>,
}

/// The buffers of one row, reused across rows.
struct RowScratch {
    /// (feature, value), sorted by feature, unit norm.
    entries: Vec<(usize, f64)>,
    /// Labels, sorted.
    labels: Vec<usize>,
    chosen: Vec<usize>,
    feature_seen: Vec<bool>,
    label_seen: Vec<bool>,
    z: Vec<f64>,
    topic_cdf: Vec<f64>,
    group_cdf: Vec<f64>,
    group_visited: Vec<bool>,
    /// Cumulative member weights of the groups visited by the row, group-major.
    member_cdf: Vec<f64>,
    keys: Vec<(f64, usize)>,
}

impl RowScratch {
    fn new(m: &Model) -> Self {
        Self {
            entries: Vec::new(),
            labels: Vec::new(),
            chosen: Vec::new(),
            feature_seen: vec![false; m.d],
            label_seen: vec![false; m.l],
            z: vec![0.0; m.r],
            topic_cdf: vec![0.0; m.topics],
            group_cdf: vec![0.0; m.groups],
            group_visited: vec![false; m.groups],
            member_cdf: vec![0.0; m.l],
            keys: Vec::new(),
        }
    }
}

impl Model {
    fn new(p: &XmcSynthParams, rng: &mut GimcRng) -> Result<Self> {
        let (d, l, r) = (p.features, p.labels, p.latent);
        let sqrt_r = (r as f64).sqrt();
        let (feature_cdf, feature_logw) = zipf(d, p.feature_exponent);
        let topics = ceil_sqrt(d);
        let (topic_member_cdf, _) = zipf(part_size(0, topics, d), p.feature_exponent);
        // idf from the approximate frequency q_j of feature j = t + kT
        let total = feature_cdf[d - 1];
        let idf = (0..d)
            .map(|j| {
                let (t, k) = (j % topics, j / topics);
                let member = &topic_member_cdf[..part_size(t, topics, d)];
                let q = TOPICAL * weight(member, k) / (member[member.len() - 1] * topics as f64)
                    + (1.0 - TOPICAL) * weight(&feature_cdf, j) / total;
                // ln(1 + e^x), x = −ln(μ_f q_j)
                let x = -(p.nnz_per_row * q).ln();
                if x > 35.0 { x } else { x.exp().ln_1p() }
            })
            .collect();
        let (label_cdf, label_logw) = zipf(l, p.label_exponent);
        let groups = ceil_sqrt(l);
        let (_, group_member_logw) = zipf(part_size(0, groups, l), p.label_exponent);
        // the planted vectors, in the documented order
        let topic_centres = unit_vectors(rng, topics, r)?;
        let feature_vecs = members_around(rng, d, r, |j| j % topics, &topic_centres)?;
        let group_modes = unit_vectors(rng, groups * MODES, r)?;
        let label_modes = members_around(
            rng,
            l * MODES,
            r,
            |i| (i / MODES % groups) * MODES + i % MODES,
            &group_modes,
        )?;
        Ok(Self {
            d,
            l,
            r,
            mu_f: p.nnz_per_row,
            mu_l: p.labels_per_row,
            kappa_f: BETA_TOPIC * sqrt_r,
            kappa_l: BETA_LABEL * sqrt_r,
            feature_cdf,
            feature_logw,
            idf,
            topics,
            topic_member_cdf,
            topic_centres,
            feature_vecs,
            label_cdf,
            label_logw,
            groups,
            group_member_logw,
            group_modes,
            label_modes,
        })
    }

    /// log((1/M)·Σ_m exp(κ_L(zᵀv_m − 1))) over the M modes `modes` (M × r).
    fn mode_log_sim(&self, z: &[f64], modes: &[f64]) -> f64 {
        let r = self.r;
        let mut logs = [0.0; MODES];
        for (m, x) in logs.iter_mut().enumerate() {
            *x = self.kappa_l * (dot(z, &modes[m * r..][..r]) - 1.0);
        }
        let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        max + (logs.iter().map(|x| (x - max).exp()).sum::<f64>() / MODES as f64).ln()
    }

    fn sample_row(&self, rng: &mut GimcRng, s: &mut RowScratch) {
        self.sample_features(rng, s);
        self.sample_labels(rng, s);
    }

    fn sample_features(&self, rng: &mut GimcRng, s: &mut RowScratch) {
        let (d, r, topics) = (self.d, self.r, self.topics);
        let n = draw_count(self.mu_f, d, rng);
        // the row's topic direction and topic distribution
        let mut theta = gaussian_vec(rng, r, 1.0);
        normalise(&mut theta);
        for (t, w) in s.topic_cdf.iter_mut().enumerate() {
            *w = self.kappa_f * (dot(&theta, &self.topic_centres[t * r..][..r]) - 1.0);
        }
        cumulate_logs(&mut s.topic_cdf);
        let RowScratch {
            chosen,
            feature_seen,
            keys,
            topic_cdf,
            ..
        } = s;
        chosen.clear();
        draw_distinct(
            n,
            feature_seen,
            chosen,
            keys,
            &self.feature_logw,
            rng,
            |rng| {
                if rng.random::<f64>() < TOPICAL {
                    let t = search(topic_cdf, rng.random());
                    let member = &self.topic_member_cdf[..part_size(t, topics, d)];
                    t + search(member, rng.random()) * topics
                } else {
                    search(&self.feature_cdf, rng.random())
                }
            },
        );
        // tf-idf-like values, unit norm, sorted by feature; z = normalise(Σ_j x_j a_j)
        s.entries.clear();
        for &j in &s.chosen {
            s.feature_seen[j] = false;
            let c = rng.random::<u32>().trailing_zeros();
            let tf = 1.0 + f64::from(c).ln_1p();
            s.entries.push((j, tf * self.idf[j]));
        }
        s.entries.sort_unstable_by_key(|e| e.0);
        let norm = s.entries.iter().map(|e| e.1 * e.1).sum::<f64>().sqrt();
        s.z.iter_mut().for_each(|x| *x = 0.0);
        for e in &mut s.entries {
            e.1 /= norm;
            let a = &self.feature_vecs[e.0 * r..][..r];
            s.z.iter_mut().zip(a).for_each(|(z, a)| *z += e.1 * a);
        }
        normalise(&mut s.z);
    }

    fn sample_labels(&self, rng: &mut GimcRng, s: &mut RowScratch) {
        let (l, k, mr) = (self.l, self.groups, MODES * self.r);
        let m = draw_count(self.mu_l, l, rng);
        for (g, w) in s.group_cdf.iter_mut().enumerate() {
            *w = self.mode_log_sim(&s.z, &self.group_modes[g * mr..][..mr]);
        }
        cumulate_logs(&mut s.group_cdf);
        s.group_visited.iter_mut().for_each(|v| *v = false);
        let RowScratch {
            labels,
            label_seen,
            keys,
            z,
            group_cdf,
            group_visited,
            member_cdf,
            ..
        } = s;
        labels.clear();
        draw_distinct(m, label_seen, labels, keys, &self.label_logw, rng, |rng| {
            if rng.random::<f64>() < PRIOR_SHARE {
                return search(&self.label_cdf, rng.random());
            }
            let g = search(group_cdf, rng.random());
            let cdf = &mut member_cdf[part_offset(g, k, l)..][..part_size(g, k, l)];
            if !group_visited[g] {
                group_visited[g] = true;
                for (rank, w) in cdf.iter_mut().enumerate() {
                    let j = g + rank * k;
                    *w = self.group_member_logw[rank]
                        + self.mode_log_sim(z, &self.label_modes[j * mr..][..mr]);
                }
                cumulate_logs(cdf);
            }
            g + search(cdf, rng.random()) * k
        });
        for &j in labels.iter() {
            label_seen[j] = false;
        }
        labels.sort_unstable();
    }
}
