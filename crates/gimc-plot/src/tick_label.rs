//! Reading tick labels back, for the unit tests and the layout tests (which include this file).

#![allow(clippy::unwrap_used)]

/// The value a tick label stands for, in either format: `1500`, `0.02`, `2×10⁵`, `10⁶`,
/// `1.5×10⁻⁹` (the old writer's `1e3` also parses).
pub(crate) fn label_value(label: &str) -> f64 {
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
            '⁰' => '0',
            '¹' => '1',
            '²' => '2',
            '³' => '3',
            c @ '⁴'..='⁹' => char::from_digit(c as u32 - '⁰' as u32, 10).unwrap(),
            c => panic!("not a tick label: {label} ({c})"),
        })
        .collect();
    mant * 10f64.powi(exp.parse().unwrap())
}
