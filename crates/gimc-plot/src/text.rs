//! Text: escaping, width estimates and wrapping.

use crate::EDGE;

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

/// Estimated advance width of `c`, in em.
///
/// The values are those of DejaVu Sans (rounded up), the widest of the fonts a viewer commonly
/// substitutes for `sans-serif` (Arial, Helvetica and Liberation Sans are narrower), so a text
/// measured here is no wider when drawn. Characters not listed count as a wide letter (0.7 em),
/// wide East Asian characters and emoji as 1 em, combining marks as nothing.
pub(crate) fn advance_em(c: char) -> f64 {
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
///
/// Subscripts and superscripts (`_{…}`, `^{…}`, see [`segments`]) count at their smaller size.
pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    segments(s)
        .iter()
        .map(|(text, shift)| {
            let scale = if *shift == Shift::Base { 1.0 } else { SCRIPT };
            text.chars().map(advance_em).sum::<f64>() * size * scale
        })
        .sum()
}

/// Size of a subscript or superscript relative to the text around it.
const SCRIPT: f64 = 0.7;
/// How far a subscript drops (a superscript rises), in em of the text around it.
const SCRIPT_SHIFT: f64 = 0.3;

/// Where a piece of text sits relative to the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shift {
    Base,
    Sub,
    Super,
}

/// `s` cut into runs on the baseline, subscripts (`_{…}`) and superscripts (`^{…}`), in order:
/// `‖A‖_{F}` is `‖A‖` then the subscript `F`. A `_` or `^` not followed by a braced group, and
/// a group that is never closed, are plain text.
pub(crate) fn segments(s: &str) -> Vec<(String, Shift)> {
    let mut out: Vec<(String, Shift)> = Vec::new();
    let mut push = |text: &str, shift: Shift| {
        if text.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((last, sh)) if *sh == shift => last.push_str(text),
            _ => out.push((text.to_owned(), shift)),
        }
    };
    let mut rest = s;
    while let Some(i) = rest.find(['_', '^']) {
        let shift = if rest[i..].starts_with('_') {
            Shift::Sub
        } else {
            Shift::Super
        };
        let group = rest[i + 1..]
            .strip_prefix('{')
            .and_then(|g| g.find('}').map(|end| &g[..end]));
        match group {
            Some(inner) => {
                push(&rest[..i], Shift::Base);
                push(inner, shift);
                rest = &rest[i + 1 + inner.len() + 2..];
            }
            None => {
                push(&rest[..=i], Shift::Base);
                rest = &rest[i + 1..];
            }
        }
    }
    push(rest, Shift::Base);
    out
}

/// The SVG content of a `<text>` element of font size `size` showing `s`: escaped, with its
/// subscripts and superscripts ([`segments`]) as `<tspan>`s at 70 % of the size, shifted by
/// `dy` (which every viewer honours) and shifted back for the text after them.
pub(crate) fn svg_content(s: &str, size: f64) -> String {
    let parts = segments(s);
    if parts.iter().all(|(_, shift)| *shift == Shift::Base) {
        return escape(s);
    }
    let mut out = String::new();
    let mut offset = 0.0;
    for (text, shift) in parts {
        let (target, font) = match shift {
            Shift::Base => (0.0, size),
            Shift::Sub => (SCRIPT_SHIFT * size, SCRIPT * size),
            Shift::Super => (-SCRIPT_SHIFT * size, SCRIPT * size),
        };
        let dy = target - offset;
        offset = target;
        if shift == Shift::Base && dy == 0.0 {
            out.push_str(&escape(&text));
        } else if shift == Shift::Base {
            out.push_str(&format!(r#"<tspan dy="{dy:.1}">{}</tspan>"#, escape(&text)));
        } else {
            out.push_str(&format!(
                r#"<tspan dy="{dy:.1}" font-size="{font:.1}">{}</tspan>"#,
                escape(&text)
            ));
        }
    }
    out
}

/// `text` broken into lines no wider than `max_w` at `size` px: at spaces (and at `\n`), and
/// inside a word only when the word alone is too wide.
pub(crate) fn wrap(text: &str, size: f64, max_w: f64) -> Vec<String> {
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
pub(crate) fn wrap_balanced(text: &str, size: f64, max_w: f64) -> Vec<String> {
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
pub(crate) fn fit_text(
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
pub(crate) fn centre_within(want: f64, w: f64, canvas: f64) -> f64 {
    let (lo, hi) = (EDGE + w / 2.0, canvas - EDGE - w / 2.0);
    if lo > hi {
        canvas / 2.0
    } else {
        want.max(lo).min(hi)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
    fn subscripts_and_superscripts_are_tspans_and_count_smaller() {
        assert_eq!(
            segments("‖A − Â‖_{F} / ‖A‖_{F}"),
            [
                ("‖A − Â‖".to_owned(), Shift::Base),
                ("F".to_owned(), Shift::Sub),
                (" / ‖A‖".to_owned(), Shift::Base),
                ("F".to_owned(), Shift::Sub),
            ]
        );
        // plain underscores, carets and unclosed groups stay text
        for plain in ["nys_kmeans", "x^2", "a_{b", "snake_case_{"] {
            assert_eq!(segments(plain), [(plain.to_owned(), Shift::Base)]);
            assert_eq!(svg_content(plain, 12.0), escape(plain));
        }
        let svg = svg_content("e^{x} & y_{i<j}", 12.0);
        assert_eq!(
            svg,
            r#"e<tspan dy="-3.6" font-size="8.4">x</tspan><tspan dy="3.6"> &amp; y</tspan><tspan dy="3.6" font-size="8.4">i&lt;j</tspan>"#
        );
        // no markup characters are drawn, and the shifts return to the baseline between runs
        let drawn = svg.replace(|c: char| c != '{' && c != '}' && c != '_' && c != '^', "");
        assert!(drawn.is_empty(), "{svg}");
        // a subscript is measured at its smaller size, and the braces not at all
        let w = text_width("‖A‖_{F}", 12.0);
        assert!(w < text_width("‖A‖F", 12.0) && w > text_width("‖A‖", 12.0));
    }
}
