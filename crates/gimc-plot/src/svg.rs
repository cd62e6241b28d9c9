//! The SVG writer: the layout of the canvas around the fixed plot area ([`Layout`]), then the
//! elements in drawing order (title, grid and ticks, frame, axis labels, curves, legend).

use std::fmt::Write as _;

use crate::legend::Legend;
use crate::style::Style;
use crate::text::{centre_within, fit_text, svg_content, text_width, wrap};
use crate::ticks::{Axis, TickSet};
use crate::{
    EDGE, FONT, LEGEND_GAP, LEGEND_ROW, LINE, LineChart, MIN_LEFT, MIN_RIGHT, MIN_TOP, PLOT_H,
    PLOT_W, PlotError, TITLE_FONT, TITLE_MAX_LINES, TITLE_MIN_FONT,
};

/// Series with more points than this are drawn without markers, which would blur together.
const MAX_MARKED_POINTS: usize = 60;

/// Where everything goes: the axes and their ticks, the legend, the wrapped texts and the
/// margins around the plot area.
struct Layout {
    ax: Axis,
    ay: Axis,
    x_ticks: TickSet,
    y_ticks: TickSet,
    legend: Legend,
    /// The legend's top-left corner relative to the plot area's when inside; `None` outside.
    legend_at: Option<(f64, f64)>,
    title_size: f64,
    title_lines: Vec<String>,
    x_lines: Vec<String>,
    y_lines: Vec<String>,
    left: f64,
    top: f64,
    width: f64,
    height: f64,
}

impl Layout {
    fn new(chart: &LineChart) -> Self {
        let pts = || chart.series.iter().flat_map(|s| s.points.iter());
        let ax = Axis::new(pts().map(|p| p.0), chart.log_x);
        let ay = Axis::new(pts().map(|p| p.1), chart.log_y);
        let (pw, ph) = (PLOT_W, PLOT_H);
        let x_ticks = ax.ticks(pw, true);
        let y_ticks = ay.ticks(ph, false);

        // curves relative to the plot area's top-left corner, which fixes the legend's place
        let paths: Vec<Vec<(f64, f64)>> = chart
            .series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .map(|&(x, y)| (ax.frac(x) * pw, (1.0 - ay.frac(y)) * ph))
                    .collect()
            })
            .collect();
        let legend = Legend::new(&chart.series);
        let legend_at = legend.place(&paths, pw, ph);

        let suffix = |log: bool| if log { " (log scale)" } else { "" };
        let x_text = format!("{}{}", chart.x_label, suffix(chart.log_x));
        let y_text = format!("{}{}", chart.y_label, suffix(chart.log_y));
        let y_lines = wrap(&y_text, FONT, ph);
        let mut layout = Self {
            ax,
            ay,
            x_ticks,
            y_ticks,
            legend,
            legend_at,
            title_size: TITLE_FONT,
            title_lines: Vec::new(),
            x_lines: Vec::new(),
            y_lines,
            left: 0.0,
            top: 0.0,
            width: 0.0,
            height: 0.0,
        };
        layout.margins(&chart.title, &x_text);
        layout
    }

    /// Baseline of the first title line.
    fn title_base(&self) -> f64 {
        9.0 + self.title_size
    }

    /// Distance between the baselines of two title lines.
    fn title_pitch(&self) -> f64 {
        (self.title_size * 1.25).round()
    }

    /// Baseline of the first line of the x label.
    fn x_base(&self) -> f64 {
        self.top + PLOT_H + 42.0
    }

    /// Margins and canvas size: room for the y label and tick labels, the x tick labels'
    /// overhang, the legend when outside, then the title and x label wrapped to the canvas
    /// width.
    fn margins(&mut self, title: &str, x_text: &str) {
        let pw = PLOT_W;
        let y_label_right = 18.0 + LINE * self.y_lines.len().saturating_sub(1) as f64 + 4.0;
        let y_tick_w = self
            .y_ticks
            .major
            .iter()
            .map(|t| text_width(&t.label, FONT))
            .fold(0.0, f64::max);
        let mut left = MIN_LEFT.max(y_label_right + 6.0 + y_tick_w + 6.0);
        let mut right = match self.legend_at {
            Some(_) => MIN_RIGHT,
            None => LEGEND_GAP + self.legend.w + EDGE,
        };
        for t in &self.x_ticks.major {
            let (x, half) = (self.ax.frac_t(t.t) * pw, text_width(&t.label, FONT) / 2.0);
            left = left.max(EDGE + half - x);
            right = right.max(x + half + EDGE - pw);
        }
        self.left = left.ceil();
        self.width = self.left + pw + right.ceil();
        (self.title_size, self.title_lines) = fit_text(
            title,
            TITLE_FONT,
            TITLE_MIN_FONT,
            TITLE_MAX_LINES,
            self.width - 2.0 * EDGE,
        );
        let title_extra = self.title_lines.len().saturating_sub(1) as f64;
        self.top = MIN_TOP
            .max(self.title_base() + self.title_pitch() * title_extra + 16.0)
            .ceil();
        self.x_lines = wrap(x_text, FONT, self.width - 2.0 * EDGE);
        let mut height = self.x_base() + LINE * self.x_lines.len().saturating_sub(1) as f64 + 14.0;
        if self.legend_at.is_none() {
            height = height.max(self.top + self.legend.h + EDGE);
        }
        self.height = height.ceil();
    }

    /// Canvas x of a data x.
    fn px(&self, x: f64) -> f64 {
        self.left + self.ax.frac(x) * PLOT_W
    }

    /// Canvas y of a data y.
    fn py(&self, y: f64) -> f64 {
        self.top + (1.0 - self.ay.frac(y)) * PLOT_H
    }
}

/// Writes the `<svg>` head, the white background and the title lines.
fn write_head(out: &mut String, l: &Layout) {
    let (width, height) = (l.width, l.height);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{FONT}">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    );
    let size = l.title_size;
    for (k, line) in l.title_lines.iter().enumerate() {
        let x = centre_within(l.left + PLOT_W / 2.0, text_width(line, size), width);
        let _ = writeln!(
            out,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="{size}">{}</text>"#,
            l.title_base() + l.title_pitch() * k as f64,
            svg_content(line, size)
        );
    }
}

/// Writes the grid lines and labels of the labelled ticks, then the minor tick marks, then the
/// plot frame.
fn write_ticks(out: &mut String, l: &Layout) {
    let (left, top, pw, ph) = (l.left, l.top, PLOT_W, PLOT_H);
    for t in &l.x_ticks.major {
        let x = left + l.ax.frac_t(t.t) * pw;
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
            svg_content(&t.label, FONT)
        );
    }
    for t in &l.y_ticks.major {
        let y = top + (1.0 - l.ay.frac_t(t.t)) * ph;
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
            svg_content(&t.label, FONT)
        );
    }
    for &t in &l.x_ticks.minor {
        let x = left + l.ax.frac_t(t) * pw;
        if (left..=left + pw).contains(&x) {
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#999"/>"##,
                top + ph,
                top + ph - 4.0
            );
        }
    }
    for &t in &l.y_ticks.minor {
        let y = top + (1.0 - l.ay.frac_t(t)) * ph;
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
}

/// Writes the x label under the plot area and the y label, rotated, left of it.
fn write_axis_labels(out: &mut String, l: &Layout) {
    let x_base = l.x_base();
    for (k, line) in l.x_lines.iter().enumerate() {
        let x = centre_within(l.left + PLOT_W / 2.0, text_width(line, FONT), l.width);
        let _ = writeln!(
            out,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x_base + LINE * k as f64,
            svg_content(line, FONT)
        );
    }
    let yc = l.top + PLOT_H / 2.0;
    for (k, line) in l.y_lines.iter().enumerate() {
        let x = 18.0 + LINE * k as f64;
        let _ = writeln!(
            out,
            r#"<text x="{x}" y="{yc:.1}" text-anchor="middle" transform="rotate(-90 {x} {yc:.1})">{}</text>"#,
            svg_content(line, FONT)
        );
    }
}

/// Writes each series as a polyline with its markers (when it has few enough points).
fn write_curves(out: &mut String, chart: &LineChart, l: &Layout) {
    for (i, s) in chart.series.iter().enumerate() {
        let style = Style::of(i);
        let coords: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", l.px(x), l.py(y)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{}" stroke-width="1.8"{} points="{}"/>"#,
            style.colour,
            style.dash(),
            coords.join(" ")
        );
        if s.points.len() <= MAX_MARKED_POINTS {
            for &(x, y) in &s.points {
                style.marker(out, l.px(x), l.py(y));
            }
        }
    }
}

/// Writes the legend: in its free inside corner, else right of the plot area
/// ([`Legend::place`]).
fn write_legend(out: &mut String, l: &Layout) {
    let (lx, ly) = match l.legend_at {
        Some((x, y)) => (l.left + x, l.top + y),
        None => (l.left + PLOT_W + LEGEND_GAP, l.top),
    };
    let _ = writeln!(out, r#"<g class="legend">"#);
    let _ = writeln!(
        out,
        r##"<rect x="{lx:.1}" y="{ly:.1}" width="{:.1}" height="{:.1}" fill="white" fill-opacity="0.85" stroke="#999"/>"##,
        l.legend.w, l.legend.h
    );
    let mut y = ly + 16.0;
    for (i, lines) in l.legend.rows.iter().enumerate() {
        let style = Style::of(i);
        let _ = writeln!(
            out,
            r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{}" stroke-width="1.8"{}/>"#,
            lx + 6.0,
            y - 4.0,
            lx + 26.0,
            y - 4.0,
            style.colour,
            style.dash()
        );
        style.marker(out, lx + 16.0, y - 4.0);
        for (k, line) in lines.iter().enumerate() {
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                lx + 30.0,
                y + LINE * k as f64,
                svg_content(line, FONT)
            );
        }
        y += LEGEND_ROW + LINE * (lines.len() - 1) as f64;
    }
    let _ = writeln!(out, "</g>");
}

impl LineChart {
    /// Render the chart as a standalone SVG document.
    ///
    /// The layout rules (text wrapping, legend placement, ticks) are in the crate
    /// documentation.
    pub fn to_svg(&self) -> Result<String, PlotError> {
        self.validate()?;
        let layout = Layout::new(self);
        let mut out = String::new();
        write_head(&mut out, &layout);
        write_ticks(&mut out, &layout);
        write_axis_labels(&mut out, &layout);
        write_curves(&mut out, self, &layout);
        write_legend(&mut out, &layout);
        out.push_str("</svg>\n");
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::testutil::{assert_texts_inside, balanced, chart, frame, texts};

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
    fn a_subscript_in_a_label_is_drawn_as_a_subscript() {
        let mut c = chart();
        c.y_label = "relative error ‖A − Â‖_{F} / ‖A‖_{F}".into();
        let svg = c.to_svg().unwrap();
        assert!(balanced(&svg));
        let y_label = svg.lines().find(|l| l.contains("rotate(-90")).unwrap();
        assert!(!y_label.contains("_{"), "{y_label}");
        assert_eq!(y_label.matches(r#"font-size="8.4">F</tspan>"#).count(), 2);
        let (_, _, _, _, content) = texts(&svg).into_iter().find(|t| t.3).unwrap();
        assert_eq!(content, "relative error ‖A − Â‖F / ‖A‖F");
    }
}
