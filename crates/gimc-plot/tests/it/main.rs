//! Layout checks on rendered charts, through the public API only: they read the SVG back.
//!
//! Text extents are estimated here independently of the crate, with an average advance of
//! 0.6 em per character (a plain sans-serif average; the crate's own per-character estimate is
//! checked in its unit tests).

#![allow(clippy::unwrap_used)]

use gimc_plot::LineChart;

#[path = "../../src/tick_label.rs"]
mod tick_label;

use tick_label::label_value;

/// One SVG element: name, attributes and text content (the writer puts one per line).
#[derive(Debug)]
struct El {
    name: String,
    attrs: Vec<(String, String)>,
    text: String,
}

impl El {
    fn get(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn num(&self, key: &str) -> f64 {
        self.get(key)
            .unwrap_or_else(|| panic!("{self:?} has no {key}"))
            .parse()
            .unwrap()
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn elements(svg: &str) -> Vec<El> {
    let mut out = Vec::new();
    for line in svg.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix('<') else {
            continue;
        };
        if rest.starts_with('/') {
            continue;
        }
        let end = rest.find('>').unwrap();
        let tag = rest[..end].trim_end_matches('/');
        let name = tag.split_whitespace().next().unwrap().to_owned();
        let mut attrs = Vec::new();
        let mut s = &tag[name.len()..];
        while let Some(eq) = s.find("=\"") {
            let key = s[..eq].trim().to_owned();
            let close = s[eq + 2..].find('"').unwrap();
            attrs.push((key, unescape(&s[eq + 2..eq + 2 + close])));
            s = &s[eq + 2 + close + 1..];
        }
        let text = match rest[end + 1..].find('<') {
            Some(stop) => unescape(&rest[end + 1..end + 1 + stop]),
            None => String::new(),
        };
        out.push(El { name, attrs, text });
    }
    out
}

/// Width and height of the canvas.
fn canvas(els: &[El]) -> (f64, f64) {
    let svg = els.iter().find(|e| e.name == "svg").unwrap();
    (svg.num("width"), svg.num("height"))
}

/// The plot frame: the unfilled black rectangle, as (x0, y0, x1, y1).
fn frame(els: &[El]) -> (f64, f64, f64, f64) {
    let r = els
        .iter()
        .find(|e| e.name == "rect" && e.get("fill") == Some("none"))
        .unwrap();
    let (x, y) = (r.num("x"), r.num("y"));
    (x, y, x + r.num("width"), y + r.num("height"))
}

/// The legend box: the rectangle stroked grey.
fn legend_box(els: &[El]) -> (f64, f64, f64, f64) {
    let r = els
        .iter()
        .find(|e| e.name == "rect" && e.get("stroke") == Some("#999"))
        .unwrap();
    let (x, y) = (r.num("x"), r.num("y"));
    (x, y, x + r.num("width"), y + r.num("height"))
}

/// The vertices of every curve.
fn curves(els: &[El]) -> Vec<Vec<(f64, f64)>> {
    els.iter()
        .filter(|e| e.name == "polyline")
        .map(|e| {
            e.get("points")
                .unwrap()
                .split(' ')
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// Labelled x ticks: a text drawn right after a vertical grid line at its x, as (x, label).
fn x_ticks(els: &[El]) -> Vec<(f64, String)> {
    els.windows(2)
        .filter(|w| {
            w[0].name == "line"
                && w[1].name == "text"
                && w[0].get("x1") == w[0].get("x2")
                && w[0].get("x1") == w[1].get("x")
        })
        .map(|w| (w[1].num("x"), w[1].text.clone()))
        .collect()
}

/// Labelled y ticks: a text drawn right after a horizontal grid line, as (y, label).
fn y_ticks(els: &[El]) -> Vec<(f64, String)> {
    els.windows(2)
        .filter(|w| {
            w[0].name == "line"
                && w[1].name == "text"
                && w[0].get("y1") == w[0].get("y2")
                && w[1].get("text-anchor") == Some("end")
        })
        .map(|w| (w[0].num("y1"), w[1].text.clone()))
        .collect()
}

/// Whether segment a–b meets the rectangle (x0, y0, x1, y1) (Liang–Barsky).
fn segment_meets(a: (f64, f64), b: (f64, f64), r: (f64, f64, f64, f64)) -> bool {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - r.0),
        (dx, r.2 - a.0),
        (-dy, a.1 - r.1),
        (dy, r.3 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else if p < 0.0 {
            t0 = t0.max(q / p);
        } else {
            t1 = t1.min(q / p);
        }
    }
    t0 <= t1
}

/// The format family of a label: plain with n decimals, `[m×]10ⁿ` or `m.mme±n` with n
/// mantissa decimals.
fn format_of(label: &str) -> (&'static str, usize) {
    let decimals = |s: &str| s.split_once('.').map_or(0, |(_, d)| d.len());
    let plain = |s: &str| {
        let s = s.strip_prefix('-').unwrap_or(s);
        !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.')
    };
    if plain(label) {
        return ("plain", decimals(label));
    }
    let sci_pow = |p: &str| !p.is_empty() && p.chars().all(|c| "⁻⁰¹²³⁴⁵⁶⁷⁸⁹".contains(c));
    let e_pow = |p: &str| {
        let p = p.strip_prefix('-').unwrap_or(p);
        !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())
    };
    match (label.split_once("×10"), label.split_once('e')) {
        (Some((m, p)), _) if plain(m) && sci_pow(p) => ("sci", decimals(m)),
        (None, _) if label.strip_prefix("10").is_some_and(sci_pow) => ("sci", 0),
        (_, Some((m, p))) if plain(m) && e_pow(p) => ("e", decimals(m)),
        _ => ("other", 0),
    }
}

/// At least `min` labelled ticks, one label format (a lone `0` goes with any), distinct
/// labels, values strictly monotone along the axis.
fn check_ticks(ticks: &[(f64, String)], min: usize) -> Result<(), String> {
    if ticks.len() < min {
        return Err(format!("fewer than {min} labelled ticks: {ticks:?}"));
    }
    let formats: Vec<_> = ticks
        .iter()
        .filter(|(_, l)| l != "0")
        .map(|(_, l)| format_of(l))
        .collect();
    if !formats.iter().all(|f| f.0 != "other" && *f == formats[0]) {
        return Err(format!("mixed label formats: {ticks:?}"));
    }
    let values: Vec<f64> = ticks.iter().map(|(_, l)| label_value(l)).collect();
    let mut by_pos: Vec<(f64, f64)> = ticks.iter().map(|t| t.0).zip(values).collect();
    by_pos.sort_by(|a, b| a.0.total_cmp(&b.0));
    let up = by_pos.windows(2).all(|w| w[0].1 < w[1].1);
    let down = by_pos.windows(2).all(|w| w[0].1 > w[1].1);
    if !(up || down) {
        return Err(format!("repeated or unordered labels: {ticks:?}"));
    }
    Ok(())
}

/// Panics listing every failed case.
fn assert_all(failures: Vec<String>) {
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Every unrotated text lies inside the canvas (estimated at 0.6 em per character).
fn assert_texts_inside(els: &[El]) {
    let (w, _) = canvas(els);
    for e in els
        .iter()
        .filter(|e| e.name == "text" && e.get("transform").is_none())
    {
        let size = e.get("font-size").map_or(12.0, |s| s.parse().unwrap());
        let tw = 0.6 * size * e.text.chars().count() as f64;
        let x = e.num("x");
        let (l, r) = match e.get("text-anchor") {
            Some("middle") => (x - tw / 2.0, x + tw / 2.0),
            Some("end") => (x - tw, x),
            _ => (x, x + tw),
        };
        assert!(
            l >= 0.0 && r <= w,
            "text {:?} spans [{l:.1}, {r:.1}] on a canvas {w} wide",
            e.text
        );
    }
}

fn fig2_like() -> LineChart {
    // GIMC Figure 2 on Bibtex: four rising curves and two flat reference lines near the top
    let ms = [50.0, 100.0, 200.0, 500.0, 1000.0];
    let curve = |p: [f64; 5]| ms.iter().copied().zip(p).collect::<Vec<_>>();
    let mut c = LineChart::new(
        "Bibtex: P@3 against m",
        "m (random features / landmarks)",
        "test P@3 (%)",
    )
    .with_series("IMC-RFF", curve([17.56, 21.88, 26.72, 32.54, 35.23]))
    .with_series("IMC-NYS", curve([18.05, 20.54, 23.78, 27.45, 30.07]))
    .with_series("GIMC-LFF", curve([32.59, 35.29, 37.99, 39.67, 40.16]))
    .with_series("GIMC-LNYS", curve([23.62, 26.14, 29.30, 32.52, 35.12]))
    .with_series("linear ridge", vec![(50.0, 38.83), (1000.0, 38.83)])
    .with_series("linear IMC", vec![(50.0, 37.50), (1000.0, 37.50)]);
    c.log_x = true;
    c
}

#[test]
fn a_120_character_title_stays_inside_the_canvas() {
    let title = "Relative error of IMC, IMC-RFF and GIMC-LFF against the fraction of observed \
                 entries on the nonlinear toy (of rank = 20)";
    assert_eq!(title.chars().count(), 120);
    let chart = LineChart::new(title, "observed entries (%)", "relative error")
        .with_series("GIMC-LFF", vec![(5.0, 0.77), (10.0, 0.53), (30.0, 0.06)]);
    let svg = chart.to_svg().unwrap();
    let els = elements(&svg);
    assert_texts_inside(&els);
    // the whole title is still there, over several lines, above the plot area
    let (_, top, _, _) = frame(&els);
    let lines: Vec<&El> = els
        .iter()
        .filter(|e| e.name == "text" && e.get("font-size").is_some())
        .collect();
    assert!(lines.len() >= 2, "{lines:?}");
    let joined: Vec<&str> = lines.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(joined.join(" "), title);
    assert!(lines.iter().all(|e| e.num("y") < top - 8.0), "{lines:?}");
}

#[test]
fn legend_hides_no_line_of_gimc_fig2() {
    let els = elements(&fig2_like().to_svg().unwrap());
    let legend = legend_box(&els);
    for (i, c) in curves(&els).iter().enumerate() {
        for s in c.windows(2) {
            assert!(
                !segment_meets(s[0], s[1], legend),
                "curve {i} segment {s:?} crosses the legend {legend:?}"
            );
        }
    }
    assert_texts_inside(&els);
}

#[test]
fn legend_avoids_lines_that_end_in_the_top_right_corner() {
    // learning curves that all rise to the top right, where a fixed legend would sit
    let curve = |rate: f64, top: f64| -> Vec<(f64, f64)> {
        (0..=20)
            .map(|k| {
                let x = f64::from(k);
                (x, top * (1.0 - (-rate * x).exp()))
            })
            .collect()
    };
    let chart = LineChart::new("accuracy against epoch", "epoch", "accuracy")
        .with_series("GIMC-LFF", curve(0.15, 0.95))
        .with_series("IMC-RFF", curve(0.25, 0.93))
        .with_series("a baseline with a long name", curve(0.4, 0.9));
    let els = elements(&chart.to_svg().unwrap());
    let legend = legend_box(&els);
    let plot = frame(&els);
    let (mid_x, mid_y) = ((plot.0 + plot.2) / 2.0, (plot.1 + plot.3) / 2.0);
    assert!(
        !(legend.2 > mid_x && legend.1 < mid_y),
        "legend {legend:?} in the top-right quarter of the plot {plot:?}, over the lines' ends"
    );
    // every drawn point, sampled every half pixel along each curve, stays clear of the box by
    // more than a marker's radius (3.5 px) and half the line width
    let grown = (
        legend.0 - 4.0,
        legend.1 - 4.0,
        legend.2 + 4.0,
        legend.3 + 4.0,
    );
    for c in curves(&els) {
        for s in c.windows(2) {
            let steps = ((s[1].0 - s[0].0).hypot(s[1].1 - s[0].1) * 2.0)
                .ceil()
                .max(1.0);
            for k in 0..=steps as usize {
                let f = k as f64 / steps;
                let (x, y) = (
                    s[0].0 + f * (s[1].0 - s[0].0),
                    s[0].1 + f * (s[1].1 - s[0].1),
                );
                assert!(
                    !(grown.0..=grown.2).contains(&x) || !(grown.1..=grown.3).contains(&y),
                    "curve point ({x:.1}, {y:.1}) under the legend {legend:?}"
                );
            }
        }
    }
    assert_texts_inside(&els);
}

#[test]
fn legend_goes_outside_when_every_corner_is_taken() {
    // an X across the plot area and flat lines along its top and bottom: no free corner
    let chart = LineChart::new("crowded", "x", "y")
        .with_series("rising", vec![(0.0, 0.0), (1.0, 1.0)])
        .with_series("falling", vec![(0.0, 1.0), (1.0, 0.0)])
        .with_series("top", vec![(0.0, 0.98), (1.0, 0.98)])
        .with_series("bottom", vec![(0.0, 0.02), (1.0, 0.02)]);
    let els = elements(&chart.to_svg().unwrap());
    let legend = legend_box(&els);
    let plot = frame(&els);
    let (w, h) = canvas(&els);
    assert!(
        legend.0 > plot.2,
        "legend {legend:?} not right of the plot {plot:?}"
    );
    assert!(
        legend.2 <= w && legend.3 <= h,
        "legend {legend:?} off a {w} × {h} canvas"
    );
    for c in curves(&els) {
        for s in c.windows(2) {
            assert!(!segment_meets(s[0], s[1], legend));
        }
    }
    assert_texts_inside(&els);
}

#[test]
fn log_axis_over_100_to_2000_gets_three_or_more_labels_in_one_format() {
    let mut chart = LineChart::new("log x", "x", "y")
        .with_series("s", vec![(100.0, 1.0), (300.0, 2.0), (2000.0, 3.0)]);
    chart.log_x = true;
    let els = elements(&chart.to_svg().unwrap());
    let ticks = x_ticks(&els);
    assert_all(check_ticks(&ticks, 3).err().into_iter().collect());
    // and it is the 1-2-5 sequence
    let values: Vec<f64> = ticks.iter().map(|(_, l)| label_value(l)).collect();
    assert_eq!(values, [100.0, 200.0, 500.0, 1000.0, 2000.0]);
}

#[test]
fn log_axis_over_six_decades_gets_one_tick_per_decade() {
    let points: Vec<(f64, f64)> = (0..=12)
        .map(|k| (10f64.powf(f64::from(k) / 2.0), f64::from(k)))
        .collect();
    let mut chart = LineChart::new("log x", "x", "y").with_series("s", points);
    chart.log_x = true;
    let els = elements(&chart.to_svg().unwrap());
    let ticks = x_ticks(&els);
    assert_all(check_ticks(&ticks, 7).err().into_iter().collect());
    let exps: Vec<i32> = ticks
        .iter()
        .map(|(_, l)| label_value(l).log10().round() as i32)
        .collect();
    assert_eq!(exps, (0..=6).collect::<Vec<_>>(), "{ticks:?}");
    // the same on a log y axis
    let mut chart = LineChart::new("log y", "x", "y").with_series(
        "s",
        (0..=6).map(|k| (f64::from(k), 10f64.powi(k))).collect(),
    );
    chart.log_y = true;
    let ticks = y_ticks(&elements(&chart.to_svg().unwrap()));
    assert_all(check_ticks(&ticks, 7).err().into_iter().collect());
}

#[test]
fn log_axis_within_a_decade_still_gets_three_labels() {
    let mut failures = Vec::new();
    for (lo, hi) in [(2.2, 10.0), (20.0, 50.0), (103.0, 117.0)] {
        let mut chart = LineChart::new("log y", "iteration", "objective")
            .with_series("s", vec![(0.0, hi), (1.0, (lo + hi) / 2.0), (2.0, lo)]);
        chart.log_y = true;
        let ticks = y_ticks(&elements(&chart.to_svg().unwrap()));
        if let Err(e) = check_ticks(&ticks, 3) {
            failures.push(format!("log y over [{lo}, {hi}]: {e}"));
        }
    }
    assert_all(failures);
}

#[test]
fn linear_axes_get_nice_ticks_on_small_large_and_offset_ranges() {
    let mut failures = Vec::new();
    for (lo, hi) in [
        (0.0, 1.0),
        (-3.0, 7.0),
        (1e-9, 3e-9),
        (1e-17, 3e-17),
        (0.0, 2e6),
        (0.0, 5e7),
        (1000.0, 1000.5),
        (-1e308, 1e308),
    ] {
        let chart = LineChart::new("linear", "x", "y")
            .with_series("s", vec![(0.0, lo), (1.0, hi), (2.0, (lo + hi) / 2.0)]);
        let els = elements(&chart.to_svg().unwrap());
        let ticks = y_ticks(&els);
        if let Err(e) = check_ticks(&ticks, 3) {
            failures.push(format!("linear y over [{lo:e}, {hi:e}]: {e}"));
            continue;
        }
        // the labelled ticks span at least half the data range and not much more (the axis
        // is the data range padded by a few per cent, not a made-up range around it)
        let values: Vec<f64> = ticks.iter().map(|(_, l)| label_value(l)).collect();
        let (vmin, vmax) = values
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let (tick_half, data_half) = (vmax / 2.0 - vmin / 2.0, hi / 2.0 - lo / 2.0);
        if tick_half < data_half * 0.5 || tick_half > data_half * 1.1 {
            failures.push(format!("linear y over [{lo:e}, {hi:e}]: ticks {ticks:?}"));
        }
        assert_texts_inside(&els);
    }
    assert_all(failures);
}

#[test]
fn rendering_is_deterministic() {
    let a = fig2_like().to_svg().unwrap();
    let b = fig2_like().to_svg().unwrap();
    assert_eq!(a, b);
}
