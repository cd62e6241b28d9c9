//! Small, dependency-free SVG line charts for gimc.
//!
//! ```
//! use gimc_plot::{LineChart, PlotError};
//!
//! let mut chart = LineChart::new("Training objective", "iteration", "objective")
//!     .with_series("GIMC-LFF", vec![(0.0, 10.0), (1.0, 4.0), (2.0, 2.5), (3.0, 2.2)])
//!     .with_series("IMC-RFF", vec![(0.0, 10.0), (1.0, 6.0), (2.0, 5.5), (3.0, 5.4)]);
//! chart.log_y = true;
//! let svg = chart.to_svg()?;
//! assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
//! assert!(svg.contains("GIMC-LFF") && svg.contains("IMC-RFF"));
//!
//! // Bad input is a typed error, never a panic.
//! let bad = LineChart::new("t", "x", "y").with_series("s", vec![(0.0, f64::NAN)]);
//! assert!(matches!(bad.to_svg(), Err(PlotError::NonFinite { index: 0, .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A [`LineChart`] holds named [`Series`] of `(x, y)` points and renders to a self-contained SVG
//! string ([`LineChart::to_svg`]) with axes, ticks (linear or logarithmic), a legend, and a
//! distinct colour and marker per series. The crate writes no files: the gimc command line and
//! the experiments write the string through their one output writer (`gimc_data::output`).
//!
//! Invalid input (no series, empty series, NaN or infinite coordinates, non-positive values on a
//! log axis) is a typed [`PlotError`], never a panic. The same chart always renders to the same
//! bytes.
//!
//! # Layout
//!
//! The plot area is always 548 × 324 px and the canvas grows around it, so no text is cut off: a
//! chart whose texts are short is 640 × 420 px.
//!
//! - **Text width** is estimated per character from the advance widths of DejaVu Sans, rounded
//!   up: the widest of the fonts viewers commonly use for `sans-serif` (Arial, Helvetica and
//!   Liberation Sans are narrower), so drawn text is no wider than estimated.
//! - **Title**: wrapped at spaces (inside a word only if the word alone is too wide) to the
//!   canvas width less 8 px on each side, at 15 px, with the lines evened out; if it needs more
//!   than three lines the font shrinks, 1 px at a time down to 11 px, where the title takes as
//!   many lines as it needs. The top margin grows with the lines. Each line is centred over the
//!   plot area, or moved just enough to stay on the canvas.
//! - **Axis labels and tick labels**: the x label wraps to the canvas width, the y label to the
//!   plot height, and the margins grow to hold them, the widest y tick label and the x tick
//!   labels at the ends of the axis.
//! - **Legend**: inside the plot area, in the first of the corners upper right, upper left,
//!   lower left, lower right (the order of matplotlib's `loc="best"`) that no line segment or
//!   marker of any series comes within 5 px of; if every corner is taken, or the legend does
//!   not fit inside, it goes outside, 12 px right of the plot area, and the canvas widens. So the
//!   legend never hides data. Series names wrap at 240 px.
//! - **Linear ticks**: multiples of the smallest "nice" step (1, 2, 2.5 or 5 × 10ⁿ) that gives at
//!   most 7 intervals (at most 5, 3, … if the labels would overlap). Labels have the step's
//!   decimals, or are all `m.m×10ⁿ` when the largest is at least 10⁶ or below 10⁻⁴ and that is
//!   no wider.
//! - **Log ticks**: the 1, 2 and 5 multiples of each power of ten (`100 200 500 1000 2000`);
//!   if that gives more than eight labels, or labels that would overlap, the 1 and 3 multiples
//!   (`1 3 10 30 100`), then the powers of ten alone, then every second, third, … power. The
//!   integer multiples left unlabelled are minor ticks. A range too short for three such
//!   labels (about a decade or less) gets every integer multiple (`3 4 5 … 10`), else nice
//!   linear steps. The labels of an axis share one format: plain numbers (`0.005`, `200`,
//!   `10000`) when every tick lies in [10⁻³, 10⁵), otherwise `10ⁿ` and `m×10ⁿ` throughout.

#![deny(missing_docs)]

use std::fmt::Write as _;

/// Errors from building a chart.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The chart has no series, or every series is empty.
    #[error("nothing to plot: the chart has no points")]
    Empty,
    /// A series has no points.
    #[error("series `{0}` has no points")]
    EmptySeries(String),
    /// A coordinate is NaN or infinite.
    #[error("series `{series}` point {index} is not finite ({x}, {y})")]
    NonFinite {
        /// Series name.
        series: String,
        /// Index of the point in the series.
        index: usize,
        /// x coordinate.
        x: f64,
        /// y coordinate.
        y: f64,
    },
    /// A non-positive value on a logarithmic axis.
    #[error("series `{series}` point {index}: {axis} = {value} is not positive on a log axis")]
    NonPositiveLog {
        /// Series name.
        series: String,
        /// Index of the point in the series.
        index: usize,
        /// `"x"` or `"y"`.
        axis: &'static str,
        /// The offending value.
        value: f64,
    },
}

/// One named curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points in drawing order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series from a name and points.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            points,
        }
    }
}

/// A line chart with one or more series.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineChart {
    /// Title drawn above the plot area.
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// The curves.
    pub series: Vec<Series>,
    /// Logarithmic x axis (all x must be positive).
    pub log_x: bool,
    /// Logarithmic y axis (all y must be positive).
    pub log_y: bool,
}

const COLOURS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];
/// Size of the plot area (px). It is fixed; the canvas grows around it to make room for text.
const PLOT_W: f64 = 548.0;
const PLOT_H: f64 = 324.0;
/// Smallest margins around the plot area: those of a chart whose texts are all short, which is
/// then 640 × 420 px.
const MIN_LEFT: f64 = 72.0;
const MIN_RIGHT: f64 = 20.0;
const MIN_TOP: f64 = 40.0;
/// No text comes closer than this to an edge of the canvas.
const EDGE: f64 = 8.0;
/// Font size of tick labels, axis labels and the legend, and the pitch of their wrapped lines.
const FONT: f64 = 12.0;
const LINE: f64 = 15.0;
/// Title font size, the floor it may shrink to, and the lines it may take before shrinking.
const TITLE_FONT: f64 = 15.0;
const TITLE_MIN_FONT: f64 = 11.0;
const TITLE_MAX_LINES: usize = 3;
/// Legend: distance from the plot frame when inside, gap to the frame when outside, the width
/// at which a series name wraps, and the height of one entry.
const LEGEND_INSET: f64 = 8.0;
const LEGEND_GAP: f64 = 12.0;
const LEGEND_LABEL_MAX: f64 = 240.0;
const LEGEND_ROW: f64 = 18.0;
/// Marker radius, and how far a line or marker must stay from an inside legend box (the marker
/// radius, half the stroke width and the 0.1 px rounding of the coordinates).
const MARKER_R: f64 = 3.5;
const CLEARANCE: f64 = 5.0;
/// At most this many labelled ticks on a log axis (the 1-2-5 multiples thin to 1-3, to the
/// powers of ten, then to every second, third, … power). Eight, like the linear axis's at most
/// seven intervals.
const MAX_LOG_TICKS: usize = 8;
/// Smallest gap between neighbouring tick labels (px).
const TICK_LABEL_GAP: f64 = 6.0;

/// Escape text for use in SVG element content or attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Text measurement and wrapping

/// Estimated advance width of `c`, in em.
///
/// The values are those of DejaVu Sans (rounded up), the widest of the fonts a viewer commonly
/// substitutes for `sans-serif` (Arial, Helvetica and Liberation Sans are narrower), so a text
/// measured here is no wider when drawn. Characters not listed count as a wide letter (0.7 em),
/// wide East Asian characters and emoji as 1 em, combining marks as nothing.
fn advance_em(c: char) -> f64 {
    match c {
        '\u{300}'..='\u{36f}' | '\u{200b}'..='\u{200d}' => 0.0,
        'i' | 'j' | 'l' | '\'' => 0.28,
        'I' | 'J' => 0.30,
        ' ' | '.' | ',' | '·' => 0.32,
        ':' | ';' | '/' | '\\' | '|' => 0.34,
        'f' | '-' | '‐' => 0.36,
        'r' | 't' | '(' | ')' | '[' | ']' | '!' | '"' | '¹' | '²' | '³' | '⁰' | '⁴'..='⁹' | '⁻' => {
            0.42
        }
        'ᵀ' | '*' | '_' | '`' | '‖' => 0.5,
        's' | 'z' | 'c' | '?' | 'k' | 'v' | 'x' | 'y' | 'E' | 'F' | 'L' | 'P' => 0.6,
        'a'..='h' | 'n'..='q' | 'u' | '0'..='9' | '$' | '{' | '}' | 'T' | 'Y' => 0.64,
        'D' | 'G' | 'H' | 'N' | 'O' | 'Q' | 'U' | 'Ω' => 0.79,
        '#' | '+' | '<' | '=' | '>' | '~' | '^' | '×' | '−' | '±' | '÷' | '≤' | '≥' | '≈' | '→' => {
            0.84
        }
        'w' | 'M' | '&' => 0.87,
        'm' | 'W' | '%' | '@' | '—' | '…' => 1.0,
        'A'..='Z' => 0.7,
        '\u{1100}'..='\u{115f}'
        | '\u{2e80}'..='\u{a4cf}'
        | '\u{ac00}'..='\u{d7a3}'
        | '\u{f900}'..='\u{faff}'
        | '\u{fe30}'..='\u{fe4f}'
        | '\u{ff00}'..='\u{ff60}'
        | '\u{ffe0}'..='\u{ffe6}'
        | '\u{1f300}'..='\u{1faff}'
        | '\u{20000}'..='\u{3fffd}' => 1.0,
        _ => 0.7,
    }
}

/// Estimated width (px) of `s` drawn at `size` px (see [`advance_em`]).
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().map(advance_em).sum::<f64>() * size
}

/// `text` broken into lines no wider than `max_w` at `size` px: at spaces (and at `\n`), and
/// inside a word only when the word alone is too wide.
fn wrap(text: &str, size: f64, max_w: f64) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            let joined = if line.is_empty() {
                word.to_owned()
            } else {
                format!("{line} {word}")
            };
            if text_width(&joined, size) <= max_w {
                line = joined;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            // the word starts a line; break it where it overflows
            for c in word.chars() {
                line.push(c);
                if text_width(&line, size) > max_w && line.chars().count() > 1 {
                    line.pop();
                    lines.push(std::mem::replace(&mut line, c.to_string()));
                }
            }
        }
        if !line.is_empty() {
            lines.push(line);
        }
    }
    lines
}

/// `wrap`, with the lines evened out: the narrowest width that still needs no more lines than
/// wrapping at `max_w` (found by bisection), so a title that just overflows breaks near its
/// middle rather than leaving one word on the last line.
fn wrap_balanced(text: &str, size: f64, max_w: f64) -> Vec<String> {
    let lines = wrap(text, size, max_w);
    if lines.len() < 2 {
        return lines;
    }
    let (mut lo, mut hi) = (0.0, max_w);
    for _ in 0..24 {
        let mid = (lo + hi) / 2.0;
        if wrap(text, size, mid).len() <= lines.len() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    wrap(text, size, hi)
}

/// Font size and lines of a text that must fit `max_w`: wrapped (evenly) at `size`; if that
/// takes more than `max_lines` lines the size shrinks by 1 px at a time down to `min_size`,
/// where the text takes as many lines as it needs.
fn fit_text(
    text: &str,
    size: f64,
    min_size: f64,
    max_lines: usize,
    max_w: f64,
) -> (f64, Vec<String>) {
    let mut s = size;
    loop {
        let lines = wrap_balanced(text, s, max_w);
        if lines.len() <= max_lines || s <= min_size {
            return (s, lines);
        }
        s = (s - 1.0).max(min_size);
    }
}

/// x of the anchor of a centred text of width `w`: `want`, moved just enough to keep the text
/// `EDGE` px inside a canvas of width `canvas`.
fn centre_within(want: f64, w: f64, canvas: f64) -> f64 {
    let (lo, hi) = (EDGE + w / 2.0, canvas - EDGE - w / 2.0);
    if lo > hi {
        canvas / 2.0
    } else {
        want.max(lo).min(hi)
    }
}

// ---------------------------------------------------------------------------------------------
// Axes and ticks

/// One axis: data range in transformed (possibly log10) coordinates.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

/// A labelled tick at transformed coordinate `t`.
struct Tick {
    t: f64,
    label: String,
}

/// The ticks of one axis: labelled (with a grid line) and minor (a short unlabelled mark).
struct TickSet {
    major: Vec<Tick>,
    minor: Vec<f64>,
}

/// A linear tick step `mant × 10^exp`, `mant` ∈ {1, 2, 2.5, 5}.
#[derive(Clone, Copy)]
struct Step {
    mant: f64,
    exp: i32,
}

/// `m × 10^e`, dividing for negative `e` so that 0.1, 0.2, … come out exactly rounded.
fn scaled(m: f64, e: i32) -> f64 {
    if e >= 0 {
        m * 10f64.powi(e)
    } else {
        m / 10f64.powi(-e)
    }
}

impl Step {
    fn value(self) -> f64 {
        scaled(self.mant, self.exp)
    }

    /// Decimals that print every multiple of the step exactly.
    fn decimals(self) -> usize {
        let extra = i32::from(self.mant == 2.5);
        (extra - self.exp).max(0) as usize
    }
}

/// The smallest "nice" step (1, 2, 2.5 or 5 × 10^k) that cuts a range of half-width `half`
/// into at most `max_n` intervals. Half-widths keep ranges up to ±f64::MAX finite.
fn nice_step(half: f64, max_n: usize) -> Option<Step> {
    let half_n = max_n as f64 / 2.0;
    let raw = half / half_n;
    if !(raw > 0.0 && raw.is_finite()) {
        return None;
    }
    let e0 = raw.log10().floor() as i32;
    for exp in [e0, e0.saturating_add(1)] {
        for mant in [1.0, 2.0, 2.5, 5.0] {
            let s = scaled(mant, exp);
            if s > 0.0 && s.is_finite() && half / s <= half_n * (1.0 + 1e-9) {
                return Some(Step { mant, exp });
            }
        }
    }
    None
}

/// The multiples of `step` in `[lo, hi]`.
fn step_values(lo: f64, hi: f64, step: Step) -> Vec<f64> {
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
fn superscript(digits: &str) -> String {
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
fn sci_label(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    format!("{mant}×10{}", superscript(exp))
}

fn widest(labels: &[String], size: f64) -> f64 {
    labels
        .iter()
        .map(|l| text_width(l, size))
        .fold(0.0, f64::max)
}

/// Labels of linear ticks, one format for the whole axis: fixed decimals (those of the step),
/// or `m.mm×10ⁿ` with the digits the step needs at the largest tick (zero stays `0`) when the
/// largest |tick| is at least 10⁶ or below 10⁻⁴ (matplotlib's default limits) and these labels
/// are no wider than the plain ones (so 999 995 … 1 000 005 stays plain).
fn linear_labels(values: &[f64], step: Step) -> Vec<String> {
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
fn log_labels(ticks: &[(u32, i32)]) -> Vec<String> {
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
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Self {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
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
        }
    }

    fn transform(&self, v: f64) -> f64 {
        if self.log { v.log10() } else { v }
    }

    /// Fraction of the axis length for a transformed coordinate.
    fn frac_t(&self, t: f64) -> f64 {
        (t / 2.0 - self.lo / 2.0) / (self.hi / 2.0 - self.lo / 2.0)
    }

    /// Fraction of the axis length for a data value.
    fn frac(&self, v: f64) -> f64 {
        self.frac_t(self.transform(v))
    }

    /// Whether the labels of `ticks` stay apart on an axis `length` px long: on a horizontal
    /// axis their estimated widths plus a gap, on a vertical one a line of text.
    fn labels_fit(&self, ticks: &[Tick], length: f64, horizontal: bool) -> bool {
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
    /// the labels would collide. Log: see [`Axis::log_ticks`].
    fn ticks(&self, length: f64, horizontal: bool) -> TickSet {
        if self.log {
            return self.log_ticks(length, horizontal);
        }
        let half = self.hi / 2.0 - self.lo / 2.0;
        let mut first = None;
        for max_n in [7, 5, 3, 2, 1] {
            let Some(step) = nice_step(half, max_n) else {
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
    fn log_ticks(&self, length: f64, horizontal: bool) -> TickSet {
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
            let Some(step) = nice_step(vhi / 2.0 - vlo / 2.0, max_n) else {
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

// ---------------------------------------------------------------------------------------------
// Legend

/// An axis-aligned rectangle.
#[derive(Clone, Copy)]
struct Rect {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

/// Whether the segment `a`–`b` (a point if `a == b`) meets `r` (Liang–Barsky clipping).
fn segment_hits(a: (f64, f64), b: (f64, f64), r: Rect) -> bool {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - r.x0),
        (dx, r.x1 - a.0),
        (-dy, a.1 - r.y0),
        (dy, r.y1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
            if t0 > t1 {
                return false;
            }
        }
    }
    true
}

/// Whether any segment or point of the polyline `path` meets `r`.
fn path_hits(path: &[(f64, f64)], r: Rect) -> bool {
    match path {
        [] => false,
        [p] => segment_hits(*p, *p, r),
        _ => path.windows(2).any(|w| segment_hits(w[0], w[1], r)),
    }
}

/// The legend's entries (series names wrapped at `LEGEND_LABEL_MAX`) and box size.
struct Legend {
    rows: Vec<Vec<String>>,
    w: f64,
    h: f64,
}

impl Legend {
    fn new(series: &[Series]) -> Self {
        let rows: Vec<Vec<String>> = series
            .iter()
            .map(|s| {
                let lines = wrap(&s.name, FONT, LEGEND_LABEL_MAX);
                if lines.is_empty() {
                    vec![String::new()]
                } else {
                    lines
                }
            })
            .collect();
        let text_w = rows
            .iter()
            .flatten()
            .map(|l| text_width(l, FONT))
            .fold(0.0, f64::max);
        let h = 8.0
            + rows
                .iter()
                .map(|r| LEGEND_ROW + LINE * (r.len() - 1) as f64)
                .sum::<f64>();
        Self {
            rows,
            w: (30.0 + text_w + 8.0).ceil(),
            h,
        }
    }

    /// Where the legend goes, relative to the top-left corner of a `pw` × `ph` plot area whose
    /// curves are `paths` (in the same coordinates): the first of the inside corners upper
    /// right, upper left, lower left, lower right (matplotlib's `loc="best"` order) whose box,
    /// grown by `CLEARANCE`, no segment or point of any curve meets; `None` when every corner is
    /// taken or the box does not fit inside, and the legend goes outside, right of the plot
    /// area. So the legend never covers a line or marker.
    fn place(&self, paths: &[Vec<(f64, f64)>], pw: f64, ph: f64) -> Option<(f64, f64)> {
        if self.w + 2.0 * LEGEND_INSET > pw || self.h + 2.0 * LEGEND_INSET > ph {
            return None;
        }
        let (right, bottom) = (pw - self.w - LEGEND_INSET, ph - self.h - LEGEND_INSET);
        [
            (right, LEGEND_INSET),
            (LEGEND_INSET, LEGEND_INSET),
            (LEGEND_INSET, bottom),
            (right, bottom),
        ]
        .into_iter()
        .find(|&(x, y)| {
            let r = Rect {
                x0: x - CLEARANCE,
                y0: y - CLEARANCE,
                x1: x + self.w + CLEARANCE,
                y1: y + self.h + CLEARANCE,
            };
            !paths.iter().any(|p| path_hits(p, r))
        })
    }
}

fn marker(out: &mut String, shape: usize, x: f64, y: f64, colour: &str) {
    let r = MARKER_R;
    let _ = match shape % 4 {
        0 => writeln!(
            out,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{colour}"/>"#
        ),
        1 => writeln!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="{}" height="{}" fill="{colour}"/>"#,
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        2 => writeln!(
            out,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{colour}"/>"#,
            x,
            y - r - 0.5,
            x - r,
            y + r,
            x + r,
            y + r
        ),
        _ => writeln!(
            out,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{colour}"/>"#,
            x,
            y - r,
            x + r,
            y,
            x,
            y + r,
            x - r,
            y
        ),
    };
}

/// `" stroke-dasharray=…"` for series past the tenth colour, else nothing.
fn dash(i: usize) -> &'static str {
    if i >= COLOURS.len() {
        r#" stroke-dasharray="5,3""#
    } else {
        ""
    }
}

impl LineChart {
    /// A chart with a title and axis labels and no series yet.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Self {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            ..Self::default()
        }
    }

    /// Add a series (builder style).
    pub fn with_series(mut self, name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        self.series.push(Series::new(name, points));
        self
    }

    fn validate(&self) -> Result<(), PlotError> {
        if self.series.is_empty() {
            return Err(PlotError::Empty);
        }
        for s in &self.series {
            if s.points.is_empty() {
                return Err(PlotError::EmptySeries(s.name.clone()));
            }
            for (index, &(x, y)) in s.points.iter().enumerate() {
                if !x.is_finite() || !y.is_finite() {
                    return Err(PlotError::NonFinite {
                        series: s.name.clone(),
                        index,
                        x,
                        y,
                    });
                }
                for (on, axis, value) in [(self.log_x, "x", x), (self.log_y, "y", y)] {
                    if on && value <= 0.0 {
                        return Err(PlotError::NonPositiveLog {
                            series: s.name.clone(),
                            index,
                            axis,
                            value,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Render the chart as a standalone SVG document.
    ///
    /// The layout rules (text wrapping, legend placement, ticks) are in the crate
    /// documentation.
    pub fn to_svg(&self) -> Result<String, PlotError> {
        self.validate()?;
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let ax = Axis::new(pts().map(|p| p.0), self.log_x);
        let ay = Axis::new(pts().map(|p| p.1), self.log_y);
        let (pw, ph) = (PLOT_W, PLOT_H);
        let x_ticks = ax.ticks(pw, true);
        let y_ticks = ay.ticks(ph, false);

        // curves relative to the plot area's top-left corner, which fixes the legend's place
        let paths: Vec<Vec<(f64, f64)>> = self
            .series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .map(|&(x, y)| (ax.frac(x) * pw, (1.0 - ay.frac(y)) * ph))
                    .collect()
            })
            .collect();
        let legend = Legend::new(&self.series);
        let legend_at = legend.place(&paths, pw, ph);

        // margins: room for the y label and tick labels, the x tick labels' overhang, the
        // legend when outside, then the title and x label wrapped to the canvas width
        let x_suffix = if self.log_x { " (log scale)" } else { "" };
        let y_suffix = if self.log_y { " (log scale)" } else { "" };
        let x_text = format!("{}{x_suffix}", self.x_label);
        let y_text = format!("{}{y_suffix}", self.y_label);
        let y_lines = wrap(&y_text, FONT, ph);
        let y_label_right = 18.0 + LINE * y_lines.len().saturating_sub(1) as f64 + 4.0;
        let y_tick_w = y_ticks
            .major
            .iter()
            .map(|t| text_width(&t.label, FONT))
            .fold(0.0, f64::max);
        let (mut left, mut right) = (
            MIN_LEFT.max(y_label_right + 6.0 + y_tick_w + 6.0),
            match legend_at {
                Some(_) => MIN_RIGHT,
                None => LEGEND_GAP + legend.w + EDGE,
            },
        );
        for t in &x_ticks.major {
            let (x, half) = (ax.frac_t(t.t) * pw, text_width(&t.label, FONT) / 2.0);
            left = left.max(EDGE + half - x);
            right = right.max(x + half + EDGE - pw);
        }
        let (left, right) = (left.ceil(), right.ceil());
        let width = left + pw + right;
        let (title_size, title_lines) = fit_text(
            &self.title,
            TITLE_FONT,
            TITLE_MIN_FONT,
            TITLE_MAX_LINES,
            width - 2.0 * EDGE,
        );
        let title_pitch = (title_size * 1.25).round();
        let title_base = 9.0 + title_size;
        let top = MIN_TOP
            .max(title_base + title_pitch * title_lines.len().saturating_sub(1) as f64 + 16.0)
            .ceil();
        let x_lines = wrap(&x_text, FONT, width - 2.0 * EDGE);
        let x_base = top + ph + 42.0;
        let mut height = x_base + LINE * x_lines.len().saturating_sub(1) as f64 + 14.0;
        if legend_at.is_none() {
            height = height.max(top + legend.h + EDGE);
        }
        let height = height.ceil();
        let px = |x: f64| left + ax.frac(x) * pw;
        let py = |y: f64| top + (1.0 - ay.frac(y)) * ph;

        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{FONT}">"#
        );
        let _ = writeln!(
            out,
            r#"<rect width="{width}" height="{height}" fill="white"/>"#
        );
        for (k, line) in title_lines.iter().enumerate() {
            let x = centre_within(left + pw / 2.0, text_width(line, title_size), width);
            let _ = writeln!(
                out,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="{title_size}">{}</text>"#,
                title_base + title_pitch * k as f64,
                escape(line)
            );
        }
        // grid lines and labelled ticks, then minor tick marks
        for t in &x_ticks.major {
            let x = left + ax.frac_t(t.t) * pw;
            if !(left - 0.5..=left + pw + 0.5).contains(&x) {
                continue;
            }
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{:.1}" stroke="#e5e5e5"/>"##,
                top + ph
            );
            let _ = writeln!(
                out,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                top + ph + 16.0,
                escape(&t.label)
            );
        }
        for t in &y_ticks.major {
            let y = top + (1.0 - ay.frac_t(t.t)) * ph;
            if !(top - 0.5..=top + ph + 0.5).contains(&y) {
                continue;
            }
            let _ = writeln!(
                out,
                r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/>"##,
                left + pw
            );
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 6.0,
                y + 4.0,
                escape(&t.label)
            );
        }
        for &t in &x_ticks.minor {
            let x = left + ax.frac_t(t) * pw;
            if (left..=left + pw).contains(&x) {
                let _ = writeln!(
                    out,
                    r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#999"/>"##,
                    top + ph,
                    top + ph - 4.0
                );
            }
        }
        for &t in &y_ticks.minor {
            let y = top + (1.0 - ay.frac_t(t)) * ph;
            if (top..=top + ph).contains(&y) {
                let _ = writeln!(
                    out,
                    r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#999"/>"##,
                    left + 4.0
                );
            }
        }
        let _ = writeln!(
            out,
            r#"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        for (k, line) in x_lines.iter().enumerate() {
            let x = centre_within(left + pw / 2.0, text_width(line, FONT), width);
            let _ = writeln!(
                out,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                x_base + LINE * k as f64,
                escape(line)
            );
        }
        let yc = top + ph / 2.0;
        for (k, line) in y_lines.iter().enumerate() {
            let x = 18.0 + LINE * k as f64;
            let _ = writeln!(
                out,
                r#"<text x="{x}" y="{yc:.1}" text-anchor="middle" transform="rotate(-90 {x} {yc:.1})">{}</text>"#,
                escape(line)
            );
        }
        // curves
        for (i, s) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let coords: Vec<String> = s
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="1.8"{} points="{}"/>"#,
                dash(i),
                coords.join(" ")
            );
            // markers only when they stay readable
            if s.points.len() <= 60 {
                for &(x, y) in &s.points {
                    marker(&mut out, i, px(x), py(y), colour);
                }
            }
        }
        // legend: a free inside corner, else right of the plot area (`Legend::place`)
        let (lx, ly) = match legend_at {
            Some((x, y)) => (left + x, top + y),
            None => (left + pw + LEGEND_GAP, top),
        };
        let _ = writeln!(out, r#"<g class="legend">"#);
        let _ = writeln!(
            out,
            r##"<rect x="{lx:.1}" y="{ly:.1}" width="{:.1}" height="{:.1}" fill="white" fill-opacity="0.85" stroke="#999"/>"##,
            legend.w, legend.h
        );
        let mut y = ly + 16.0;
        for (i, lines) in legend.rows.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let _ = writeln!(
                out,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="1.8"{}/>"#,
                lx + 6.0,
                y - 4.0,
                lx + 26.0,
                y - 4.0,
                dash(i)
            );
            marker(&mut out, i, lx + 16.0, y - 4.0, colour);
            for (k, line) in lines.iter().enumerate() {
                let _ = writeln!(
                    out,
                    r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                    lx + 30.0,
                    y + LINE * k as f64,
                    escape(line)
                );
            }
            y += LEGEND_ROW + LINE * (lines.len() - 1) as f64;
        }
        let _ = writeln!(out, "</g>");
        out.push_str("</svg>\n");
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Checks that every element is closed in order (a tiny XML well-formedness check).
    fn balanced(svg: &str) -> bool {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(start) = rest.find('<') {
            let Some(end) = rest[start..].find('>') else {
                return false;
            };
            let tag = &rest[start + 1..start + end];
            rest = &rest[start + end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                if stack.pop().as_deref() != Some(name.trim()) {
                    return false;
                }
            } else if !tag.ends_with('/') {
                let name = tag.split_whitespace().next().unwrap_or("").to_string();
                stack.push(name);
            }
            // attribute values must not contain raw '<'
            if tag.contains('<') {
                return false;
            }
        }
        stack.is_empty()
    }

    fn chart() -> LineChart {
        LineChart::new("Objective <per> iteration", "iteration", "objective")
            .with_series("train & more", vec![(1.0, 10.0), (2.0, 5.0), (3.0, 2.5)])
            .with_series("validation", vec![(1.0, 11.0), (2.0, 7.0), (3.0, 6.0)])
            .with_series("third", vec![(1.0, 3.0), (3.0, 1.0)])
    }

    #[test]
    fn svg_is_well_formed_and_names_every_series() {
        let svg = chart().to_svg().unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(balanced(&svg), "{svg}");
        assert!(svg.contains("train &amp; more"));
        assert!(svg.contains("validation") && svg.contains("third"));
        assert!(svg.contains("Objective &lt;per&gt; iteration"));
        assert_eq!(svg.matches("<polyline").count(), 3);
        // distinct colours and markers: one circle series, one square, one triangle
        assert!(svg.contains("#1f77b4") && svg.contains("#d62728") && svg.contains("#2ca02c"));
        assert_eq!(svg.matches("<circle").count(), 3 + 1);
    }

    /// (x, y, width, height) of the plot frame, the unfilled rectangle.
    fn frame(svg: &str) -> (f64, f64, f64, f64) {
        let line = svg
            .lines()
            .find(|l| l.starts_with("<rect") && l.contains(r#"fill="none""#))
            .unwrap();
        let get = |k: &str| -> f64 {
            let key = format!(" {k}=\"");
            let i = line.find(&key).unwrap() + key.len();
            line[i..i + line[i..].find('"').unwrap()].parse().unwrap()
        };
        (get("x"), get("y"), get("width"), get("height"))
    }

    #[test]
    fn points_fall_inside_the_plot_area() {
        let svg = chart().to_svg().unwrap();
        let (fx, fy, fw, fh) = frame(&svg);
        assert_eq!((fw, fh), (PLOT_W, PLOT_H));
        let line = svg.lines().find(|l| l.starts_with("<polyline")).unwrap();
        let pts = line
            .split("points=\"")
            .nth(1)
            .unwrap()
            .trim_end_matches("\"/>");
        for p in pts.split(' ') {
            let (x, y) = p.split_once(',').unwrap();
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert!((fx..=fx + fw).contains(&x), "{x}");
            assert!((fy..=fy + fh).contains(&y), "{y}");
        }
    }

    /// Every text element of `svg` as (x, font size, anchor, rotated, content).
    fn texts(svg: &str) -> Vec<(f64, f64, String, bool, String)> {
        svg.lines()
            .filter(|l| l.starts_with("<text"))
            .map(|l| {
                let open = &l[..l.find('>').unwrap()];
                let get = |k: &str| {
                    let key = format!(" {k}=\"");
                    open.find(&key).map(|i| {
                        let i = i + key.len();
                        open[i..i + open[i..].find('"').unwrap()].to_owned()
                    })
                };
                let content = &l[l.find('>').unwrap() + 1..l.rfind("</text>").unwrap()];
                let content = content
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&apos;", "'")
                    .replace("&amp;", "&");
                (
                    get("x").unwrap().parse().unwrap(),
                    get("font-size").map_or(FONT, |s| s.parse().unwrap()),
                    get("text-anchor").unwrap_or_default(),
                    get("transform").is_some(),
                    content,
                )
            })
            .collect()
    }

    /// The canvas width of `svg`.
    fn canvas_width(svg: &str) -> f64 {
        let head = svg.lines().next().unwrap();
        let i = head.find(" width=\"").unwrap() + 8;
        head[i..i + head[i..].find('"').unwrap()].parse().unwrap()
    }

    /// Every unrotated text, measured with [`text_width`], stays `EDGE` inside the canvas.
    fn assert_texts_inside(svg: &str) {
        let w = canvas_width(svg);
        for (x, size, anchor, rotated, content) in texts(svg) {
            if rotated {
                continue;
            }
            let tw = text_width(&content, size);
            let (l, r) = match anchor.as_str() {
                "middle" => (x - tw / 2.0, x + tw / 2.0),
                "end" => (x - tw, x),
                _ => (x, x + tw),
            };
            assert!(
                l >= EDGE - 0.1 && r <= w - EDGE + 0.1,
                "{content:?} at {size} px spans [{l:.1}, {r:.1}] of {w}"
            );
        }
    }

    #[test]
    fn text_width_follows_the_glyphs() {
        // per-character, not per-byte: "ᵀ" and "×" are narrow or wide, not 3 bytes wide
        assert!(text_width("mmmm", 12.0) > 2.0 * text_width("iiii", 12.0));
        assert_eq!(text_width("", 15.0), 0.0);
        assert!((text_width("10", 10.0) - 12.8).abs() < 1e-9);
        assert!(text_width("10⁶", 12.0) < text_width("1000000", 12.0));
        assert!(text_width("漢字", 12.0) >= 24.0);
    }

    #[test]
    fn wrap_keeps_every_word_and_every_line_fits() {
        let text =
            "GIMC Figure 1 (b): toy A = c·tanh(XB)tanh(YC)ᵀ + N (200 × 200, d = 50, rank 20)";
        for max_w in [40.0, 80.0, 200.0, 400.0, 700.0] {
            let lines = wrap(text, 15.0, max_w);
            assert!(
                lines.iter().all(|l| text_width(l, 15.0) <= max_w),
                "{lines:?}"
            );
            if max_w >= 200.0 {
                assert_eq!(lines.join(" "), text);
            } else {
                // the widest word was broken: the characters are all there, in order
                let squeeze = |s: &str| s.replace(' ', "");
                assert_eq!(squeeze(&lines.concat()), squeeze(text));
            }
        }
        assert_eq!(wrap(text, 15.0, 1e4).len(), 1);
        // a word wider than the line is broken inside
        let word = "x".repeat(200);
        let lines = wrap(&word, 12.0, 100.0);
        assert!(lines.len() > 1 && lines.iter().all(|l| text_width(l, 12.0) <= 100.0));
        assert_eq!(lines.concat(), word);
        // explicit line breaks are kept; blank text gives no line
        assert_eq!(wrap("a\nb", 12.0, 500.0), ["a", "b"]);
        assert!(wrap("  ", 12.0, 500.0).is_empty());
        // balanced: two lines of similar width rather than a full line and a stray word
        let lines = wrap_balanced(text, 15.0, 600.0);
        assert_eq!(lines.len(), 2);
        let greedy = wrap(text, 15.0, 600.0);
        let (a, b) = (text_width(&lines[0], 15.0), text_width(&lines[1], 15.0));
        let (g0, g1) = (text_width(&greedy[0], 15.0), text_width(&greedy[1], 15.0));
        assert!(
            a.max(b) <= g0 && a.min(b) > g1 && a.min(b) > 0.5 * a.max(b),
            "{lines:?}"
        );
    }

    #[test]
    fn long_titles_wrap_or_shrink_and_no_text_leaves_the_canvas() {
        let long =
            "GIMC Figure 1 (b): toy A = c·tanh(XB)tanh(YC)ᵀ + N (200 × 200, d = 50, rank 20)";
        let very_long = long.repeat(4);
        let unbreakable = "W".repeat(150);
        for (title, min_size) in [
            (long, TITLE_FONT),
            (very_long.as_str(), TITLE_MIN_FONT),
            (unbreakable.as_str(), TITLE_MIN_FONT),
        ] {
            let mut c = chart();
            c.title = title.to_owned();
            let svg = c.to_svg().unwrap();
            assert!(balanced(&svg));
            assert_texts_inside(&svg);
            let title_lines: Vec<_> = svg
                .lines()
                .filter(|l| l.contains(" font-size="))
                .skip(1) // the <svg> element's default
                .collect();
            let title_lines: Vec<_> = texts(&title_lines.join("\n"));
            assert!(title_lines.len() >= 2, "{title_lines:?}");
            assert!(
                title_lines.iter().all(|t| t.1 >= min_size),
                "{title_lines:?}"
            );
            // the title sits above the plot area, which moved down to make room
            let (_, top, _, _) = frame(&svg);
            assert!(top > MIN_TOP);
        }
        // a short title keeps the 640 × 420 canvas
        let svg = chart().to_svg().unwrap();
        assert!(
            svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="640" height="420""#)
        );
        assert_texts_inside(&svg);
    }

    #[test]
    fn long_axis_labels_and_series_names_wrap() {
        let mut c = chart();
        c.x_label = "observed entries of the matrix, as a percentage of all n × m entries, \
                     averaged over five seeds and three splits (%)"
            .repeat(2);
        c.y_label = "relative error ‖A − Â‖_F / ‖A‖_F on the held-out entries".repeat(3);
        c.series[0].name = "a series name long enough to need two lines in the legend box".into();
        let svg = c.to_svg().unwrap();
        assert!(balanced(&svg));
        assert_texts_inside(&svg);
        // the rotated y label lines fit the plot height
        for (_, size, _, rotated, content) in texts(&svg) {
            if rotated {
                assert!(text_width(&content, size) <= PLOT_H, "{content}");
            }
        }
    }

    fn labels(t: &TickSet) -> Vec<&str> {
        t.major.iter().map(|t| t.label.as_str()).collect()
    }

    fn log_axis(lo: f64, hi: f64) -> Axis {
        Axis::new([lo, hi].into_iter(), true)
    }

    #[test]
    fn log_ticks_1_2_5_thinned_to_1_3_then_decades_in_one_format() {
        // 1-2-5 with plain labels: the issue's "100" and "1e3" pair is gone
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

    /// The number a tick label stands for: `1500`, `0.02`, `2×10⁵`, `10⁻⁶`.
    fn label_value(label: &str) -> f64 {
        if let Ok(v) = label.parse() {
            return v;
        }
        let (mant, pow) = match label.split_once("×10") {
            Some((m, p)) => (m.parse::<f64>().unwrap(), p),
            None => (1.0, label.strip_prefix("10").unwrap()),
        };
        let exp: String = pow
            .chars()
            .map(|c| match c {
                '⁻' => '-',
                c => {
                    let k = "⁰¹²³⁴⁵⁶⁷⁸⁹".chars().position(|d| d == c).unwrap();
                    char::from_digit(k as u32, 10).unwrap()
                }
            })
            .collect();
        mant * 10f64.powi(exp.parse().unwrap())
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

    fn lin_axis(lo: f64, hi: f64) -> Axis {
        Axis::new([lo, hi].into_iter(), false)
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

    #[test]
    fn legend_takes_the_first_free_corner_or_goes_outside() {
        let legend = Legend::new(&[Series::new("a", vec![]), Series::new("b", vec![])]);
        let (w, h) = (PLOT_W, PLOT_H);
        // nothing drawn: upper right
        let at = legend.place(&[], w, h).unwrap();
        assert_eq!(at, (w - legend.w - LEGEND_INSET, LEGEND_INSET));
        // a line along the top: lower left (matplotlib's order: UR, UL, LL, LR)
        let top = vec![(0.0, 10.0), (w, 10.0)];
        assert_eq!(
            legend.place(std::slice::from_ref(&top), w, h).unwrap(),
            (LEGEND_INSET, h - legend.h - LEGEND_INSET)
        );
        // and one along the left edge too: lower right
        let side = vec![(10.0, 0.0), (10.0, h)];
        assert_eq!(
            legend.place(&[top.clone(), side.clone()], w, h).unwrap(),
            (w - legend.w - LEGEND_INSET, h - legend.h - LEGEND_INSET)
        );
        // a lone point counts too; every corner taken: outside
        let bottom_right = vec![(w - 20.0, h - 20.0)];
        assert_eq!(legend.place(&[top, side, bottom_right], w, h), None);
        // a legend taller than the plot area goes outside, and the canvas grows to hold it
        let mut c = LineChart::new("many", "x", "y");
        for i in 0..25 {
            c = c.with_series(format!("series {i}"), vec![(0.0, f64::from(i)), (1.0, 0.0)]);
        }
        let svg = c.to_svg().unwrap();
        let rect = svg
            .lines()
            .find(|l| l.contains(r##"stroke="#999""##))
            .unwrap();
        assert!(rect.contains(&format!(
            r#"x="{:.1}""#,
            frame(&svg).0 + PLOT_W + LEGEND_GAP
        )));
        assert!(balanced(&svg));
        assert_texts_inside(&svg);
    }

    #[test]
    fn segment_clipping() {
        let r = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: 10.0,
            y1: 10.0,
        };
        assert!(segment_hits((-5.0, 5.0), (15.0, 5.0), r)); // straight through
        assert!(segment_hits((5.0, 5.0), (5.0, 5.0), r)); // a point inside
        assert!(!segment_hits((-5.0, -5.0), (-1.0, 20.0), r)); // passes left
        assert!(!segment_hits((-5.0, 4.0), (4.0, -5.0), r)); // cuts past the corner
        assert!(segment_hits((-5.0, 6.0), (6.0, -5.0), r)); // clips the corner
        assert!(!segment_hits((20.0, 20.0), (20.0, 20.0), r));
    }

    #[test]
    fn log_axes_reject_non_positive_and_accept_positive() {
        let mut c = chart();
        c.log_y = true;
        let svg = c.to_svg().unwrap();
        assert!(balanced(&svg));
        assert!(svg.contains(">10<") && svg.contains("(log scale)"));
        c.series[1].points[2].1 = 0.0;
        assert!(matches!(
            c.to_svg(),
            Err(PlotError::NonPositiveLog { axis: "y", .. })
        ));
        let mut c = chart();
        c.log_x = true;
        c.series[0].points[0].0 = -1.0;
        assert!(matches!(
            c.to_svg(),
            Err(PlotError::NonPositiveLog { axis: "x", .. })
        ));
    }

    #[test]
    fn nan_empty_and_constant_inputs() {
        let mut c = chart();
        c.series[0].points[1].1 = f64::NAN;
        assert!(matches!(c.to_svg(), Err(PlotError::NonFinite { .. })));
        assert!(matches!(
            LineChart::default().to_svg(),
            Err(PlotError::Empty)
        ));
        let c = LineChart::default().with_series("e", vec![]);
        assert!(matches!(c.to_svg(), Err(PlotError::EmptySeries(_))));
        // a single point / constant series still renders
        let c = LineChart::default().with_series("one", vec![(1.0, 2.0)]);
        assert!(balanced(&c.to_svg().unwrap()));
    }
}
