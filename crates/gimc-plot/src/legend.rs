//! The legend: its entries, its box and where it goes.

use crate::text::{text_width, wrap};
use crate::{CLEARANCE, FONT, LEGEND_INSET, LEGEND_LABEL_MAX, LEGEND_ROW, LINE, Series};

/// An axis-aligned rectangle.
#[derive(Clone, Copy)]
pub(crate) struct Rect {
    pub(crate) x0: f64,
    pub(crate) y0: f64,
    pub(crate) x1: f64,
    pub(crate) y1: f64,
}

/// Whether the segment `a`–`b` (a point if `a == b`) meets `r` (Liang–Barsky clipping).
pub(crate) fn segment_hits(a: (f64, f64), b: (f64, f64), r: Rect) -> bool {
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
pub(crate) fn path_hits(path: &[(f64, f64)], r: Rect) -> bool {
    match path {
        [] => false,
        [p] => segment_hits(*p, *p, r),
        _ => path.windows(2).any(|w| segment_hits(w[0], w[1], r)),
    }
}

/// The legend's entries (series names wrapped at `LEGEND_LABEL_MAX`) and box size.
pub(crate) struct Legend {
    pub(crate) rows: Vec<Vec<String>>,
    pub(crate) w: f64,
    pub(crate) h: f64,
}

impl Legend {
    pub(crate) fn new(series: &[Series]) -> Self {
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
    pub(crate) fn place(&self, paths: &[Vec<(f64, f64)>], pw: f64, ph: f64) -> Option<(f64, f64)> {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::testutil::{assert_texts_inside, balanced, frame};
    use crate::{LEGEND_GAP, LineChart, PLOT_H, PLOT_W};

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
}
