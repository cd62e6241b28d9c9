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
//! string ([`LineChart::to_svg`]) or file ([`LineChart::write_svg`]) with axes, ticks (linear,
//! or decade ticks on log axes), a legend, and a distinct colour and marker per series.
//!
//! Invalid input (no series, empty series, NaN or infinite coordinates, non-positive values on a
//! log axis) is a typed [`PlotError`], never a panic.

#![deny(missing_docs)]

use std::fmt::Write as _;
use std::path::Path;

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
    /// Writing the SVG file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// Destination path.
        path: String,
        /// Underlying error.
        source: std::io::Error,
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
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 56.0;

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

/// One axis: data range in transformed (possibly log10) coordinates.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Self {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            let t = if log { v.log10() } else { v };
            lo = lo.min(t);
            hi = hi.max(t);
        }
        if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
            let pad = if log { 0.5 } else { lo.abs().max(1.0) * 0.05 };
            lo -= pad;
            hi += pad;
        } else if !log {
            let pad = (hi - lo) * 0.04;
            lo -= pad;
            hi += pad;
        }
        Self { lo, hi, log }
    }

    fn transform(&self, v: f64) -> f64 {
        if self.log { v.log10() } else { v }
    }

    /// Fraction of the axis length for a data value.
    fn frac(&self, v: f64) -> f64 {
        (self.transform(v) - self.lo) / (self.hi - self.lo)
    }

    /// Tick positions (data values) and labels.
    fn ticks(&self) -> Vec<(f64, String)> {
        if self.log {
            let (a, b) = (self.lo.ceil() as i32, self.hi.floor() as i32);
            if b >= a {
                let step = ((b - a) / 8 + 1).max(1);
                return (a..=b)
                    .step_by(step as usize)
                    .map(|e| (10f64.powi(e), format_log_tick(e)))
                    .collect();
            }
            // less than a decade: linear ticks on the data values
            let (lo, hi) = (10f64.powf(self.lo), 10f64.powf(self.hi));
            return linear_ticks(lo, hi);
        }
        linear_ticks(self.lo, self.hi)
    }
}

fn format_log_tick(e: i32) -> String {
    match e {
        0 => "1".into(),
        1 => "10".into(),
        -1 => "0.1".into(),
        2 => "100".into(),
        e => format!("1e{e}"),
    }
}

/// "Nice" linear ticks (1, 2, 5 × 10^k steps) covering `[lo, hi]`.
fn linear_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let span = hi - lo;
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 7.0)
        .unwrap_or(10.0 * mag);
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let mut out = Vec::new();
    let mut k = (lo / step).ceil();
    while k * step <= hi + step * 1e-9 && out.len() < 20 {
        let v = k * step;
        let v = if v.abs() < step * 1e-9 { 0.0 } else { v };
        let label = if v != 0.0 && (v.abs() >= 1e6 || v.abs() < 1e-4) {
            format!("{v:.1e}")
        } else {
            format!("{v:.decimals$}")
        };
        out.push((v, label));
        k += 1.0;
    }
    out
}

fn marker(out: &mut String, shape: usize, x: f64, y: f64, colour: &str) {
    let r = 3.5;
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
    pub fn to_svg(&self) -> Result<String, PlotError> {
        self.validate()?;
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let ax = Axis::new(pts().map(|p| p.0), self.log_x);
        let ay = Axis::new(pts().map(|p| p.1), self.log_y);
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let px = |x: f64| LEFT + ax.frac(x) * pw;
        let py = |y: f64| TOP + (1.0 - ay.frac(y)) * ph;

        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(
            out,
            r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
            LEFT + pw / 2.0,
            escape(&self.title)
        );
        // grid and ticks
        for (v, label) in ax.ticks() {
            let x = px(v);
            if !(LEFT - 0.5..=LEFT + pw + 0.5).contains(&x) {
                continue;
            }
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e5e5e5"/>"##,
                TOP + ph
            );
            let _ = writeln!(
                out,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                TOP + ph + 16.0,
                escape(&label)
            );
        }
        for (v, label) in ay.ticks() {
            let y = py(v);
            if !(TOP - 0.5..=TOP + ph + 0.5).contains(&y) {
                continue;
            }
            let _ = writeln!(
                out,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/>"##,
                LEFT + pw
            );
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 6.0,
                y + 4.0,
                escape(&label)
            );
        }
        let _ = writeln!(
            out,
            r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        let x_suffix = if self.log_x { " (log scale)" } else { "" };
        let y_suffix = if self.log_y { " (log scale)" } else { "" };
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}{x_suffix}</text>"#,
            LEFT + pw / 2.0,
            HEIGHT - 14.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            out,
            r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}{y_suffix}</text>"#,
            TOP + ph / 2.0,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
        // curves
        for (i, s) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let dash = if i >= COLOURS.len() {
                r#" stroke-dasharray="5,3""#
            } else {
                ""
            };
            let coords: Vec<String> = s
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="1.8"{dash} points="{}"/>"#,
                coords.join(" ")
            );
            // markers only when they stay readable
            if s.points.len() <= 60 {
                for &(x, y) in &s.points {
                    marker(&mut out, i, px(x), py(y), colour);
                }
            }
        }
        // legend (top-right inside the plot area)
        let longest = self
            .series
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0) as f64;
        let lw = 34.0 + 6.8 * longest;
        let lx = LEFT + pw - lw - 8.0;
        let ly = TOP + 8.0;
        let _ = writeln!(
            out,
            r##"<rect x="{lx:.1}" y="{ly:.1}" width="{lw:.1}" height="{:.1}" fill="white" fill-opacity="0.85" stroke="#999"/>"##,
            8.0 + 18.0 * self.series.len() as f64
        );
        for (i, s) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let y = ly + 16.0 + 18.0 * i as f64;
            let _ = writeln!(
                out,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="1.8"/>"#,
                lx + 6.0,
                y - 4.0,
                lx + 26.0,
                y - 4.0
            );
            marker(&mut out, i, lx + 16.0, y - 4.0, colour);
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{y:.1}">{}</text>"#,
                lx + 30.0,
                escape(&s.name)
            );
        }
        out.push_str("</svg>\n");
        Ok(out)
    }

    /// Render and write the chart to `path`.
    pub fn write_svg(&self, path: impl AsRef<Path>) -> Result<(), PlotError> {
        let svg = self.to_svg()?;
        let path = path.as_ref();
        std::fs::write(path, svg).map_err(|source| PlotError::Io {
            path: path.display().to_string(),
            source,
        })
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

    #[test]
    fn points_fall_inside_the_plot_area() {
        let svg = chart().to_svg().unwrap();
        let line = svg.lines().find(|l| l.starts_with("<polyline")).unwrap();
        let pts = line
            .split("points=\"")
            .nth(1)
            .unwrap()
            .trim_end_matches("\"/>");
        for p in pts.split(' ') {
            let (x, y) = p.split_once(',').unwrap();
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert!((LEFT..=WIDTH - RIGHT).contains(&x), "{x}");
            assert!((TOP..=HEIGHT - BOTTOM).contains(&y), "{y}");
        }
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

    #[test]
    fn write_svg_reports_io_errors() {
        let dir = std::env::temp_dir().join(format!("gimc-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.svg");
        chart().write_svg(&path).unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("<svg"));
        let bad = dir.join("missing-dir").join("c.svg");
        assert!(matches!(chart().write_svg(bad), Err(PlotError::Io { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
