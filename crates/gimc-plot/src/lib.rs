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
//! distinct colour and marker per series: ten colours and ten markers (five shapes, filled and
//! outlined in turn, so a curve drawn over an identical one leaves the first visible), dashed
//! from the eleventh series on.
//!
//! In every text (title, axis labels, series names) `_{…}` is a subscript and `^{…}` a
//! superscript, drawn smaller and shifted (`‖A − Â‖_{F}`); a group holds no space. Any other `_`
//! or `^` is plain text. The crate writes no files: the gimc command line and
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
//!   most 7 intervals (at most 5, 3, … if the labels would overlap). An axis whose values are
//!   all integers spanning at least 2 (epochs, counts) gets integer ticks: 1, 2 or 5 × 10ⁿ with
//!   n ≥ 0. Labels have the step's
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

mod legend;
mod style;
mod svg;
#[cfg(test)]
mod testutil;
mod text;
#[cfg(test)]
mod tick_label;
mod ticks;

pub use text::escape;

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
}
