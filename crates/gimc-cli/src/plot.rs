//! `gimc plot`: draws a trace written by `gimc fit --trace` (CSV or JSON) as an SVG line chart.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use gimc_plot::{LineChart, Series};

use crate::common::{check_outputs, write_output};
use crate::globals::Globals;

/// Arguments of `gimc plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// The trace file (CSV or JSON from `gimc fit --trace`).
    pub trace: PathBuf,
    /// The SVG to write.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Column on the y axis: objective, train_metric, validation_metric, step.
    #[arg(long, default_value = "objective")]
    pub y: String,
    /// Logarithmic y axis.
    #[arg(long)]
    pub log_y: bool,
}

const COLUMNS: [&str; 6] = [
    "iteration",
    "objective",
    "step",
    "seconds",
    "train_metric",
    "validation_metric",
];

fn read_trace(path: &PathBuf) -> Result<Vec<[Option<f64>; 6]>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut rows = Vec::new();
    if text.trim_start().starts_with('[') {
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), e.line()))?;
        let Some(arr) = v.as_array() else {
            bail!("{}: expected a JSON array of iterations", path.display());
        };
        for o in arr {
            let mut r = [None; 6];
            for (c, name) in COLUMNS.iter().enumerate() {
                r[c] = o.get(*name).and_then(serde_json::Value::as_f64);
            }
            rows.push(r);
        }
    } else {
        let mut lines = text.lines().enumerate();
        let Some((_, header)) = lines.next() else {
            bail!("{}: empty trace file", path.display());
        };
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        let pos: Vec<Option<usize>> = COLUMNS
            .iter()
            .map(|c| cols.iter().position(|h| h == c))
            .collect();
        if pos[0].is_none() {
            bail!("{}:1: no `iteration` column in the header", path.display());
        }
        for (no, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(',').collect();
            let mut r = [None; 6];
            for (c, p) in pos.iter().enumerate() {
                if let Some(&cell) = p.and_then(|p| f.get(p)) {
                    let cell = cell.trim();
                    if !cell.is_empty() {
                        r[c] = Some(cell.parse().map_err(|_| {
                            anyhow::anyhow!(
                                "{}:{}: `{cell}` in column {} is not a number",
                                path.display(),
                                no + 1,
                                COLUMNS[c]
                            )
                        })?);
                    }
                }
            }
            rows.push(r);
        }
    }
    if rows.is_empty() {
        bail!("{}: the trace has no iterations", path.display());
    }
    Ok(rows)
}

/// Runs `gimc plot`.
pub fn run(a: &PlotArgs, g: &Globals) -> Result<()> {
    check_outputs(g, &[Some(&a.out)], &[&a.trace])?;
    let rows = read_trace(&a.trace)?;
    let Some(c) = COLUMNS.iter().position(|c| *c == a.y) else {
        bail!(
            "--y: unknown column `{}` (choose {})",
            a.y,
            COLUMNS[1..].join(", ")
        );
    };
    let points: Vec<(f64, f64)> = rows.iter().filter_map(|r| Some((r[0]?, r[c]?))).collect();
    if points.is_empty() {
        bail!("{}: column {} has no values", a.trace.display(), a.y);
    }
    let mut chart = LineChart::new(
        format!("gimc fit: {} per iteration", a.y),
        "outer iteration",
        a.y.clone(),
    );
    chart.series.push(Series::new(a.y.clone(), points));
    chart.log_y = a.log_y;
    let svg = chart
        .to_svg()
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.trace.display()))?;
    write_output(Some(&a.out), &svg)?;
    g.info(&format!("wrote {}", a.out.display()));
    Ok(())
}
