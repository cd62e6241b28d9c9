//! Colours, markers and dashes that tell the series apart.
//!
//! Series `i` takes colour `i mod 10` and marker `(i + i div 10) mod 10`, and is dashed from the
//! eleventh series on, so no two of the first hundred series share colour, marker and dash.
//! The markers alternate filled and outlined shapes: a series drawn over another with the same
//! points leaves the first one's marker visible through the outline.

use std::fmt::Write as _;

use crate::MARKER_R;

/// The series colours (matplotlib's `tab10`).
pub(crate) const COLOURS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// The marker shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
}

/// The markers in the order series take them: five shapes, each filled and outlined, filled
/// and outlined alternating.
pub(crate) const MARKERS: [(Shape, bool); 10] = [
    (Shape::Circle, true),
    (Shape::Square, false),
    (Shape::TriangleUp, true),
    (Shape::Diamond, false),
    (Shape::TriangleDown, true),
    (Shape::Circle, false),
    (Shape::Square, true),
    (Shape::TriangleUp, false),
    (Shape::Diamond, true),
    (Shape::TriangleDown, false),
];

/// How series `i` is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Style {
    pub(crate) colour: &'static str,
    pub(crate) shape: Shape,
    pub(crate) filled: bool,
    pub(crate) dashed: bool,
}

impl Style {
    /// The style of the `i`-th series (see the module documentation).
    pub(crate) fn of(i: usize) -> Self {
        let n = COLOURS.len();
        let (shape, filled) = MARKERS[(i + i / n) % MARKERS.len()];
        Self {
            colour: COLOURS[i % n],
            shape,
            filled,
            dashed: i >= n,
        }
    }

    /// `" stroke-dasharray=…"` for a dashed series, else nothing.
    pub(crate) fn dash(self) -> &'static str {
        if self.dashed {
            r#" stroke-dasharray="5,3""#
        } else {
            ""
        }
    }

    /// Writes the series' marker centred at (`x`, `y`).
    pub(crate) fn marker(self, out: &mut String, x: f64, y: f64) {
        let r = MARKER_R;
        let colour = self.colour;
        let paint = if self.filled {
            format!(r#"fill="{colour}""#)
        } else {
            format!(r#"fill="none" stroke="{colour}" stroke-width="1.5""#)
        };
        let vertices: &[(f64, f64)] = match self.shape {
            Shape::Circle => {
                let _ = writeln!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" {paint}/>"#);
                return;
            }
            Shape::Square => {
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="{}" height="{}" {paint}/>"#,
                    x - r,
                    y - r,
                    2.0 * r,
                    2.0 * r
                );
                return;
            }
            Shape::TriangleUp => &[(0.0, -r - 0.5), (-r, r), (r, r)],
            Shape::Diamond => &[
                (0.0, -r - 0.5),
                (r + 0.5, 0.0),
                (0.0, r + 0.5),
                (-r - 0.5, 0.0),
            ],
            Shape::TriangleDown => &[(0.0, r + 0.5), (-r, -r), (r, -r)],
        };
        let points: Vec<String> = vertices
            .iter()
            .map(|(dx, dy)| format!("{:.1},{:.1}", x + dx, y + dy))
            .collect();
        let _ = writeln!(out, r#"<polygon points="{}" {paint}/>"#, points.join(" "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_of_the_first_hundred_series_look_alike() {
        let styles: Vec<Style> = (0..100).map(Style::of).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[..i] {
                assert!(
                    (a.colour, a.shape, a.filled, a.dashed)
                        != (b.colour, b.shape, b.filled, b.dashed),
                    "series {i} looks like an earlier one"
                );
            }
        }
        // the first ten: ten colours and ten markers
        let first: Vec<(Shape, bool)> = styles[..10].iter().map(|s| (s.shape, s.filled)).collect();
        for (i, m) in first.iter().enumerate() {
            assert!(!first[..i].contains(m));
        }
        assert!(styles[..10].iter().all(|s| !s.dashed) && styles[10].dashed);
    }

    #[test]
    fn outlined_markers_leave_what_is_under_them_visible() {
        let mut out = String::new();
        Style::of(1).marker(&mut out, 10.0, 10.0);
        assert!(out.contains(r#"fill="none""#) && out.contains(COLOURS[1]));
        let mut out = String::new();
        Style::of(2).marker(&mut out, 10.0, 10.0);
        assert!(out.starts_with("<polygon") && out.contains(&format!(r#"fill="{}""#, COLOURS[2])));
    }
}
