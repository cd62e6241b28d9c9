//! Axes and their ticks: linear steps of 1, 2, 2.5 or 5 × 10ⁿ, log ticks at the 1-2-5, 1-3 or
//! power-of-ten multiples.

use crate::text::text_width;
use crate::{FONT, MAX_LOG_TICKS, TICK_LABEL_GAP};

/// One axis: data range in transformed (possibly log10) coordinates.
pub(crate) struct Axis {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) log: bool,
    /// Every value is an integer and they span at least 2: ticks fall on integers (epochs,
    /// counts), so the step is at least 1 and never 2.5.
    pub(crate) integer: bool,
}

/// A labelled tick at transformed coordinate `t`.
pub(crate) struct Tick {
    pub(crate) t: f64,
    pub(crate) label: String,
}

/// The ticks of one axis: labelled (with a grid line) and minor (a short unlabelled mark).
pub(crate) struct TickSet {
    pub(crate) major: Vec<Tick>,
    pub(crate) minor: Vec<f64>,
}

/// A linear tick step `mant × 10^exp`, `mant` ∈ {1, 2, 2.5, 5}.
#[derive(Clone, Copy)]
pub(crate) struct Step {
    pub(crate) mant: f64,
    pub(crate) exp: i32,
}

/// `m × 10^e`, dividing for negative `e` so that 0.1, 0.2, … come out exactly rounded.
pub(crate) fn scaled(m: f64, e: i32) -> f64 {
    if e >= 0 {
        m * 10f64.powi(e)
    } else {
        m / 10f64.powi(-e)
    }
}

impl Step {
    pub(crate) fn value(self) -> f64 {
        scaled(self.mant, self.exp)
    }

    /// Decimals that print every multiple of the step exactly.
    pub(crate) fn decimals(self) -> usize {
        let extra = i32::from(self.mant == 2.5);
        (extra - self.exp).max(0) as usize
    }
}

/// The smallest "nice" step (1, 2, 2.5 or 5 × 10^k) that cuts a range of half-width `half`
/// into at most `max_n` intervals. Half-widths keep ranges up to ±f64::MAX finite.
pub(crate) fn nice_step(half: f64, max_n: usize, integer: bool) -> Option<Step> {
    let half_n = max_n as f64 / 2.0;
    let raw = half / half_n;
    if !(raw > 0.0 && raw.is_finite()) {
        return None;
    }
    let e0 = raw.log10().floor() as i32;
    // an integer axis: no step below 1, and 2 or 5 rather than 2.5
    let e0 = if integer { e0.max(0) } else { e0 };
    for exp in [e0, e0.saturating_add(1)] {
        for mant in [1.0, 2.0, 2.5, 5.0] {
            if integer && exp == 0 && mant == 2.5 {
                continue;
            }
            let s = scaled(mant, exp);
            if s > 0.0 && s.is_finite() && half / s <= half_n * (1.0 + 1e-9) {
                return Some(Step { mant, exp });
            }
        }
    }
    None
}

/// The multiples of `step` in `[lo, hi]`.
pub(crate) fn step_values(lo: f64, hi: f64, step: Step) -> Vec<f64> {
    let s = step.value();
    let (k0, k1) = ((lo / s - 1e-9).ceil(), (hi / s + 1e-9).floor());
    if !(k0.is_finite() && k1.is_finite()) || k1 - k0 > 100.0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut k = k0;
    while k <= k1 {
        let v = scaled(k * step.mant, step.exp);
        out.push(if v.abs() < s * 1e-9 { 0.0 } else { v });
        k += 1.0;
    }
    out
}

/// Unicode superscript form of an integer written in ASCII (`-12` → `⁻¹²`).
pub(crate) fn superscript(digits: &str) -> String {
    digits
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            '9' => '⁹',
            c => c,
        })
        .collect()
}

/// `v` as `m.mm×10ⁿ` with `decimals` digits after the point.
pub(crate) fn sci_label(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    format!("{mant}×10{}", superscript(exp))
}

pub(crate) fn widest(labels: &[String], size: f64) -> f64 {
    labels
        .iter()
        .map(|l| text_width(l, size))
        .fold(0.0, f64::max)
}

/// Labels of linear ticks, one format for the whole axis: fixed decimals (those of the step),
/// or `m.mm×10ⁿ` with the digits the step needs at the largest tick (zero stays `0`) when the
/// largest |tick| is at least 10⁶ or below 10⁻⁴ (matplotlib's default limits) and these labels
/// are no wider than the plain ones (so 999 995 … 1 000 005 stays plain).
pub(crate) fn linear_labels(values: &[f64], step: Step) -> Vec<String> {
    let d = step.decimals();
    let plain: Vec<String> = values.iter().map(|v| format!("{v:.d$}")).collect();
    let max_abs = values.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    if max_abs == 0.0 {
        return plain;
    }
    let e_max: i32 = format!("{max_abs:e}")
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let digits = (e_max - step.exp + i32::from(step.mant == 2.5)).clamp(0, 15) as usize;
    let sci: Vec<String> = values
        .iter()
        .map(|&v| {
            if v == 0.0 {
                "0".to_owned()
            } else {
                sci_label(v, digits)
            }
        })
        .collect();
    if !(1e-4..1e6).contains(&max_abs) && widest(&sci, FONT) <= widest(&plain, FONT) {
        sci
    } else {
        plain
    }
}

/// Labels of log ticks `m × 10^e`, one format for the whole axis: plain numbers (`0.005`, `20`,
/// `10000`) when every tick lies in [0.001, 100000), else `10ⁿ` and `m×10ⁿ` for all of them.
pub(crate) fn log_labels(ticks: &[(u32, i32)]) -> Vec<String> {
    let plain = ticks.iter().all(|&(_, e)| (-3..=4).contains(&e));
    ticks
        .iter()
        .map(|&(m, e)| match (plain, e) {
            (true, e) if e >= 0 => format!("{m}{}", "0".repeat(e as usize)),
            (true, e) => format!("0.{}{m}", "0".repeat((-e - 1) as usize)),
            (false, e) if m == 1 => format!("10{}", superscript(&e.to_string())),
            (false, e) => format!("{m}×10{}", superscript(&e.to_string())),
        })
        .collect()
}

impl Axis {
    pub(crate) fn new(values: impl Iterator<Item = f64>, log: bool) -> Self {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut all_integers = true;
        for v in values {
            all_integers &= v.fract() == 0.0 && v.abs() < 1e15;
            let t = if log { v.log10() } else { v };
            lo = lo.min(t);
            hi = hi.max(t);
        }
        // half-widths, so that a range as wide as ±f64::MAX stays finite
        let half = hi / 2.0 - lo / 2.0;
        let pad = if half > f64::EPSILON * lo.abs().max(hi.abs()) {
            half * 0.08 // 4 % of the range on each side
        } else if log {
            0.5 // a constant series: half a decade each side
        } else if lo == 0.0 {
            1.0
        } else {
            lo.abs() * 0.05
        };
        Self {
            lo: (lo - pad).max(f64::MIN),
            hi: (hi + pad).min(f64::MAX),
            log,
            integer: !log && all_integers && hi - lo >= 2.0,
        }
    }

    pub(crate) fn transform(&self, v: f64) -> f64 {
        if self.log { v.log10() } else { v }
    }

    /// Fraction of the axis length for a transformed coordinate.
    pub(crate) fn frac_t(&self, t: f64) -> f64 {
        (t / 2.0 - self.lo / 2.0) / (self.hi / 2.0 - self.lo / 2.0)
    }

    /// Fraction of the axis length for a data value.
    pub(crate) fn frac(&self, v: f64) -> f64 {
        self.frac_t(self.transform(v))
    }

    /// Whether the labels of `ticks` stay apart on an axis `length` px long: on a horizontal
    /// axis their estimated widths plus a gap, on a vertical one a line of text.
    pub(crate) fn labels_fit(&self, ticks: &[Tick], length: f64, horizontal: bool) -> bool {
        let at: Vec<(f64, f64)> = ticks
            .iter()
            .map(|t| (self.frac_t(t.t) * length, text_width(&t.label, FONT)))
            .collect();
        at.windows(2).all(|w| {
            let need = if horizontal {
                (w[0].1 + w[1].1) / 2.0 + TICK_LABEL_GAP
            } else {
                FONT + 2.0
            };
            (w[1].0 - w[0].0).abs() >= need
        })
    }

    /// The ticks of the axis, for an axis `length` px long.
    ///
    /// Linear: multiples of the smallest nice step giving at most 7 intervals; 5, 3, 2, 1 if
    /// the labels would collide. On an integer axis the step is 1, 2 or 5 × 10ⁿ, n ≥ 0. Log: see [`Axis::log_ticks`].
    pub(crate) fn ticks(&self, length: f64, horizontal: bool) -> TickSet {
        if self.log {
            return self.log_ticks(length, horizontal);
        }
        let half = self.hi / 2.0 - self.lo / 2.0;
        let mut first = None;
        for max_n in [7, 5, 3, 2, 1] {
            let Some(step) = nice_step(half, max_n, self.integer) else {
                continue;
            };
            let values = step_values(self.lo, self.hi, step);
            let major: Vec<Tick> = values
                .iter()
                .zip(linear_labels(&values, step))
                .map(|(&t, label)| Tick { t, label })
                .collect();
            if self.labels_fit(&major, length, horizontal) {
                return TickSet {
                    major,
                    minor: Vec::new(),
                };
            }
            first.get_or_insert(major);
        }
        TickSet {
            major: first.unwrap_or_default(),
            minor: Vec::new(),
        }
    }

    /// Log-axis ticks, the first of these that gives at least three labelled ticks, at most
    /// [`MAX_LOG_TICKS`], whose labels do not collide:
    ///
    /// 1. the 1, 2 and 5 multiples of each power of ten (`100 200 500 1000 2000`);
    /// 2. thinned to the 1 and 3 multiples (`1 3 10 30 100`);
    /// 3. thinned to the powers of ten, then to every second, third, … power;
    /// 4. a range too short for three of those (inside about one decade): every integer
    ///    multiple (`3 4 5 … 10`), else nice linear steps over the data values.
    ///
    /// The integer multiples that carry no label are minor ticks (the skipped powers of ten
    /// when only every k-th one is labelled).
    pub(crate) fn log_ticks(&self, length: f64, horizontal: bool) -> TickSet {
        let (lo, hi) = (self.lo, self.hi);
        let tol = 1e-9 * (hi - lo).max(1e-300);
        let (e_lo, e_hi) = (lo.floor() as i32, hi.ceil() as i32);
        let multiples = |subs: &[u32]| -> Vec<(u32, i32)> {
            let mut out = Vec::new();
            for e in e_lo..=e_hi {
                for &m in subs {
                    let t = f64::from(e) + f64::from(m).log10();
                    if t >= lo - tol && t <= hi + tol {
                        out.push((m, e));
                    }
                }
            }
            out
        };
        let at = |(m, e): (u32, i32)| f64::from(e) + f64::from(m).log10();
        let labelled = |ticks: &[(u32, i32)]| -> Vec<Tick> {
            ticks
                .iter()
                .zip(log_labels(ticks))
                .map(|(&me, label)| Tick { t: at(me), label })
                .collect()
        };
        let usable = |major: &[Tick]| {
            (3..=MAX_LOG_TICKS).contains(&major.len()) && self.labels_fit(major, length, horizontal)
        };
        let all = multiples(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let unlabelled = |chosen: &[(u32, i32)]| -> Vec<f64> {
            all.iter()
                .copied()
                .filter(|me| !chosen.contains(me))
                .map(at)
                .collect()
        };
        for subs in [&[1, 2, 5][..], &[1, 3], &[1]] {
            let chosen = multiples(subs);
            let major = labelled(&chosen);
            if usable(&major) {
                return TickSet {
                    major,
                    minor: unlabelled(&chosen),
                };
            }
        }
        let decades = multiples(&[1]);
        if decades.len() >= 3 {
            // every k-th power of ten, k = 2, 3, …: the first that fits (a couple of labels
            // at worst, on a very short axis)
            let mut stride = 2;
            loop {
                let chosen: Vec<(u32, i32)> = decades
                    .iter()
                    .copied()
                    .filter(|&(_, e)| e.rem_euclid(stride) == 0)
                    .collect();
                let major = labelled(&chosen);
                if chosen.len() <= 2
                    || (chosen.len() <= MAX_LOG_TICKS
                        && self.labels_fit(&major, length, horizontal))
                {
                    let minor = decades
                        .iter()
                        .copied()
                        .filter(|&(_, e)| e.rem_euclid(stride) != 0)
                        .map(at)
                        .collect();
                    return TickSet { major, minor };
                }
                stride += 1;
            }
        }
        // inside about one decade: every integer multiple
        let major = labelled(&all);
        if usable(&major) {
            return TickSet {
                major,
                minor: Vec::new(),
            };
        }
        // a fraction of a decade: nice linear steps over the data values
        let (vlo, vhi) = (10f64.powf(lo), 10f64.powf(hi));
        for max_n in [7, 5, 3, 2] {
            let Some(step) = nice_step(vhi / 2.0 - vlo / 2.0, max_n, false) else {
                continue;
            };
            let values: Vec<f64> = step_values(vlo, vhi, step)
                .into_iter()
                .filter(|&v| v > 0.0)
                .collect();
            let major: Vec<Tick> = values
                .iter()
                .zip(linear_labels(&values, step))
                .map(|(&v, label)| Tick {
                    t: v.log10(),
                    label,
                })
                .collect();
            if major.len() >= 2 && self.labels_fit(&major, length, horizontal) {
                return TickSet {
                    major,
                    minor: Vec::new(),
                };
            }
        }
        // nothing fits (a very short axis): the decades, else the 1-2-5 multiples
        let chosen = if decades.is_empty() {
            multiples(&[1, 2, 5])
        } else {
            decades
        };
        TickSet {
            major: labelled(&chosen),
            minor: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::tick_label::label_value;
    use crate::{MAX_LOG_TICKS, PLOT_H, PLOT_W};

    fn labels(t: &TickSet) -> Vec<&str> {
        t.major.iter().map(|t| t.label.as_str()).collect()
    }

    fn log_axis(lo: f64, hi: f64) -> Axis {
        Axis::new([lo, hi].into_iter(), true)
    }

    #[test]
    fn log_ticks_1_2_5_thinned_to_1_3_then_decades_in_one_format() {
        // 1-2-5, every label in one plain format (no "100" beside "1e3")
        let t = log_axis(100.0, 2000.0).ticks(PLOT_W, true);
        assert_eq!(labels(&t), ["100", "200", "500", "1000", "2000"]);
        assert!(!t.minor.is_empty());
        let t = log_axis(100.0, 3200.0).ticks(PLOT_W, true);
        assert_eq!(labels(&t), ["100", "200", "500", "1000", "2000"]);
        let t = log_axis(50.0, 1000.0).ticks(PLOT_W, true);
        assert_eq!(labels(&t), ["50", "100", "200", "500", "1000"]);
        let t = log_axis(1.0, 10.0).ticks(PLOT_W, true);
        assert_eq!(labels(&t), ["1", "2", "5", "10"]);
        let t = log_axis(1.0, 10.0).ticks(PLOT_H, false);
        assert_eq!(labels(&t), ["1", "2", "5", "10"]);
        // 1-2-5 would be ten labels: thinned to 1-3, the 2 and 5 multiples as minor ticks
        let t = log_axis(0.001, 1.0).ticks(PLOT_W, true);
        assert_eq!(
            labels(&t),
            ["0.001", "0.003", "0.01", "0.03", "0.1", "0.3", "1"]
        );
        // the axis (padded by 4 %) runs from 7.6 × 10⁻⁴ to 1.3: thirty integer multiples of a
        // power of ten (8 and 9 × 10⁻⁴, nine per decade, and 1), seven of them labelled
        assert_eq!(t.minor.len(), 30 - 7);
        let t = log_axis(1.0, 1e3).ticks(PLOT_H, false);
        assert_eq!(labels(&t), ["1", "3", "10", "30", "100", "300", "1000"]);
        let t = log_axis(0.002, 0.5).ticks(PLOT_W, true);
        assert_eq!(
            labels(&t),
            [
                "0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5"
            ]
        );
        // 1-3 would be too many: the powers of ten, in the superscript form past 10⁴
        let t = log_axis(1.0, 1e6).ticks(PLOT_W, true);
        assert_eq!(
            labels(&t),
            ["10⁰", "10¹", "10²", "10³", "10⁴", "10⁵", "10⁶"]
        );
        // 2 … 9 × 10ⁿ for n = 0 … 5, and 6 … 9 × 10⁻¹ on the padded axis (10^-0.24 … 10^6.24)
        assert_eq!(t.minor.len(), 6 * 8 + 4);
        let t = log_axis(0.01, 1e4).ticks(PLOT_W, true);
        assert_eq!(
            labels(&t),
            ["0.01", "0.1", "1", "10", "100", "1000", "10000"]
        );
        // past 10⁴ every label switches to the superscript form, 2 and 5 multiples included
        let t = log_axis(2e4, 3e5).ticks(PLOT_W, true);
        assert_eq!(labels(&t), ["2×10⁴", "5×10⁴", "10⁵", "2×10⁵"]);
        let t = log_axis(1e-7, 1e-5).ticks(PLOT_W, true);
        assert_eq!(
            labels(&t),
            [
                "10⁻⁷",
                "2×10⁻⁷",
                "5×10⁻⁷",
                "10⁻⁶",
                "2×10⁻⁶",
                "5×10⁻⁶",
                "10⁻⁵"
            ]
        );
        // many decades: every second one, the others as minor ticks
        let t = log_axis(1.0, 1e12).ticks(PLOT_W, true);
        assert_eq!(
            labels(&t),
            ["10⁰", "10²", "10⁴", "10⁶", "10⁸", "10¹⁰", "10¹²"]
        );
        assert_eq!(t.minor.len(), 6);
        let t = log_axis(1e-300, 1e300).ticks(PLOT_H, false);
        assert!(
            (3..=MAX_LOG_TICKS).contains(&t.major.len()),
            "{:?}",
            labels(&t)
        );
        // under a decade: every multiple, then linear steps over the values
        let t = log_axis(2.2, 10.0).ticks(PLOT_H, false);
        assert_eq!(labels(&t), ["3", "4", "5", "6", "7", "8", "9", "10"]);
        let t = log_axis(103.0, 117.0).ticks(PLOT_H, false);
        assert!(t.major.len() >= 3, "{:?}", labels(&t));
        // a constant series still gets ticks
        let t = log_axis(7.0, 7.0).ticks(PLOT_H, false);
        assert!(t.major.len() >= 3, "{:?}", labels(&t));
    }

    /// Log ticks over ranges from a twentieth of a decade to fourteen decades, at magnitudes
    /// from 10⁻⁸ to 10⁸, on both axes: three to eight labels that do not collide, in order, each
    /// the number at its place, all in one format (plain whenever every tick lies in [0.001,
    /// 100000)), and the labelled multiples one of the sequences 1-2-5, 1-3, 1 or 1…9.
    #[test]
    fn log_ticks_hold_their_rules_over_many_ranges() {
        let mut failures = Vec::new();
        for a in (-32..=32).map(|k| f64::from(k) / 4.0) {
            for span in [
                0.05, 0.2, 0.5, 0.8, 1.0, 1.3, 2.0, 2.6, 3.0, 4.2, 6.0, 9.5, 14.0,
            ] {
                let (lo, hi) = (10f64.powf(a), 10f64.powf(a + span));
                for (length, horizontal) in [(PLOT_W, true), (PLOT_H, false)] {
                    let axis = log_axis(lo, hi);
                    let t = axis.ticks(length, horizontal);
                    let case = format!("[{lo:e}, {hi:e}] {}: {:?}", horizontal, labels(&t));
                    let n = t.major.len();
                    if !(3..=MAX_LOG_TICKS).contains(&n) {
                        failures.push(format!("{case}: {n} labels"));
                        continue;
                    }
                    if !axis.labels_fit(&t.major, length, horizontal) {
                        failures.push(format!("{case}: labels collide"));
                    }
                    if !t.major.windows(2).all(|w| w[0].t < w[1].t)
                        || t.major
                            .iter()
                            .any(|m| m.t < axis.lo - 1e-9 || m.t > axis.hi + 1e-9)
                    {
                        failures.push(format!("{case}: out of order or off the axis"));
                    }
                    let values: Vec<f64> = t.major.iter().map(|m| label_value(&m.label)).collect();
                    for (m, v) in t.major.iter().zip(&values) {
                        if (v.log10() - m.t).abs() > 1e-9 {
                            failures.push(format!("{case}: {} drawn at 10^{}", m.label, m.t));
                        }
                    }
                    let plain = t
                        .major
                        .iter()
                        .filter(|m| m.label.parse::<f64>().is_ok())
                        .count();
                    let moderate = values.iter().all(|v| (1e-3..1e5).contains(v));
                    // all plain, or (outside the moderate magnitudes) none
                    if plain != n && (moderate || plain != 0) {
                        failures.push(format!("{case}: mixed or needlessly scientific labels"));
                    }
                    let mut mants: Vec<u32> = values
                        .iter()
                        .map(|v| (v / 10f64.powf(v.log10().floor())).round() as u32)
                        .collect();
                    mants.sort_unstable();
                    mants.dedup();
                    let linear = values.iter().any(|v| {
                        let m = v / 10f64.powf(v.log10().floor());
                        (m - m.round()).abs() > 1e-6
                    });
                    // every integer multiple only inside about a decade (4 % padding each side)
                    let within = |ok: &[u32]| mants.iter().all(|m| ok.contains(m));
                    if !linear && !within(&[1, 2, 5]) && !within(&[1, 3]) && span > 1.0 {
                        failures.push(format!("{case}: multiples {mants:?}"));
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// A linear axis over [lo, hi] whose ticks need not be integers.
    fn lin_axis(lo: f64, hi: f64) -> Axis {
        Axis {
            integer: false,
            ..Axis::new([lo, hi].into_iter(), false)
        }
    }

    /// An axis of integer data (epochs, counts) gets integer ticks: steps of 1, 2 or 5 × 10ⁿ,
    /// never 2.5 or a fraction; data that is not all integers, or spans less than 2, does not.
    #[test]
    fn integer_data_gets_integer_ticks() {
        for hi in 3..=60 {
            let values = (1..=hi).map(f64::from);
            let axis = Axis::new(values, false);
            assert!(axis.integer, "1..={hi}");
            for (length, horizontal) in [(PLOT_W, true), (PLOT_H, false), (120.0, true)] {
                let t = axis.ticks(length, horizontal);
                assert!(t.major.len() >= 2, "1..={hi}: {:?}", labels(&t));
                for tick in &t.major {
                    assert_eq!(tick.t.fract(), 0.0, "1..={hi}: {:?}", labels(&t));
                    assert!(!tick.label.contains('.'), "1..={hi}: {:?}", labels(&t));
                }
            }
        }
        // the epochs of a ten-epoch fit
        let t = Axis::new((1..=10).map(f64::from), false).ticks(PLOT_W, true);
        assert_eq!(labels(&t), ["2", "4", "6", "8", "10"]);
        let t = Axis::new((1..=3).map(f64::from), false).ticks(PLOT_W, true);
        assert_eq!(labels(&t), ["1", "2", "3"]);
        assert!(!Axis::new([0.0, 1.0].into_iter(), false).integer);
        assert!(!Axis::new([1.0, 2.5, 4.0].into_iter(), false).integer);
        assert!(!Axis::new([1.0, 100.0].into_iter(), true).integer);
    }

    #[test]
    fn linear_ticks_are_nice_on_small_large_and_extreme_ranges() {
        let cases: [(f64, f64, &[&str]); 8] = [
            (0.0, 1.0, &["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]),
            (17.0, 41.0, &["20", "25", "30", "35", "40"]),
            (
                0.0,
                16.0,
                &["0.0", "2.5", "5.0", "7.5", "10.0", "12.5", "15.0"],
            ),
            (
                1e-9,
                3e-9,
                &["1.0×10⁻⁹", "1.5×10⁻⁹", "2.0×10⁻⁹", "2.5×10⁻⁹", "3.0×10⁻⁹"],
            ),
            (0.0, 2e6, &["0", "5.0×10⁵", "1.0×10⁶", "1.5×10⁶", "2.0×10⁶"]),
            (
                0.0,
                5e5,
                &["0", "100000", "200000", "300000", "400000", "500000"],
            ),
            (
                1000.0,
                1000.5,
                &["1000.0", "1000.1", "1000.2", "1000.3", "1000.4", "1000.5"],
            ),
            (
                -1e308,
                1e308,
                &["-1.0×10³⁰⁸", "-5.0×10³⁰⁷", "0", "5.0×10³⁰⁷", "1.0×10³⁰⁸"],
            ),
        ];
        for (lo, hi, want) in cases {
            let t = lin_axis(lo, hi).ticks(PLOT_H, false);
            assert_eq!(labels(&t), want, "[{lo}, {hi}]");
            assert!(t.minor.is_empty());
        }
        // tiny magnitudes are a range, not a constant
        let a = lin_axis(1e-17, 3e-17);
        assert!(a.hi - a.lo < 1e-16, "{} {}", a.lo, a.hi);
        // a constant gets a range around it
        let t = lin_axis(5.0, 5.0).ticks(PLOT_H, false);
        assert!(t.major.len() >= 3);
        let t = lin_axis(0.0, 0.0).ticks(PLOT_H, false);
        assert!(t.major.iter().any(|t| t.label == "0.0"), "{:?}", labels(&t));
        // wide labels on a horizontal axis: fewer ticks rather than overlapping labels
        let a = lin_axis(1_000_000.25, 1_000_001.75);
        let t = a.ticks(120.0, true);
        assert!(a.labels_fit(&t.major, 120.0, true), "{:?}", labels(&t));
    }
}
