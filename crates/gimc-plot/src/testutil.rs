//! Helpers of the unit tests: a well-formedness check and readers of the drawn SVG.

#![allow(clippy::unwrap_used)]

use crate::text::text_width;
use crate::{EDGE, FONT, LineChart};

/// Checks that every element is closed in order (a tiny XML well-formedness check).
pub(crate) fn balanced(svg: &str) -> bool {
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

pub(crate) fn chart() -> LineChart {
    LineChart::new("Objective <per> iteration", "iteration", "objective")
        .with_series("train & more", vec![(1.0, 10.0), (2.0, 5.0), (3.0, 2.5)])
        .with_series("validation", vec![(1.0, 11.0), (2.0, 7.0), (3.0, 6.0)])
        .with_series("third", vec![(1.0, 3.0), (3.0, 1.0)])
}

/// (x, y, width, height) of the plot frame, the unfilled rectangle.
pub(crate) fn frame(svg: &str) -> (f64, f64, f64, f64) {
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

/// Every text element of `svg` as (x, font size, anchor, rotated, content).
pub(crate) fn texts(svg: &str) -> Vec<(f64, f64, String, bool, String)> {
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
            let inner = &l[l.find('>').unwrap() + 1..l.rfind("</text>").unwrap()];
            // the text of <tspan>s (sub- and superscripts) without their tags
            let mut content = String::new();
            let mut in_tag = false;
            for c in inner.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => content.push(c),
                    _ => {}
                }
            }
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
pub(crate) fn canvas_width(svg: &str) -> f64 {
    let head = svg.lines().next().unwrap();
    let i = head.find(" width=\"").unwrap() + 8;
    head[i..i + head[i..].find('"').unwrap()].parse().unwrap()
}

/// Every unrotated text, measured with [`text_width`], stays `EDGE` inside the canvas.
pub(crate) fn assert_texts_inside(svg: &str) {
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
