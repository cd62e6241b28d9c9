//! Hyper-parameter grids and the coordinate search over them.

use std::fmt;

use crate::ExperimentError;

/// One candidate hyper-parameter setting: named values, e.g. `[("m", 200.0), ("γ", 0.002),
/// ("λ", 1.0)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// (name, value) pairs in display order.
    pub values: Vec<(&'static str, f64)>,
}

impl Setting {
    /// The value named `name`.
    ///
    /// Errors: [`ExperimentError::Failed`] when the setting has no such value.
    pub fn get(&self, name: &str) -> Result<f64, ExperimentError> {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
            .ok_or_else(|| ExperimentError::Failed(format!("setting {self} has no {name}")))
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .values
            .iter()
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        write!(f, "{}", parts.join(", "))
    }
}

/// A method's hyper-parameter grid: named axes of candidate values and the starting point of
/// the coordinate search (see [`select`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// (name, candidate values) per axis, in display order.
    pub axes: Vec<(&'static str, Vec<f64>)>,
    /// Starting index on each axis.
    pub start: Vec<usize>,
}

impl Grid {
    /// A grid with one axis, searched exhaustively.
    pub fn single(name: &'static str, values: &[f64]) -> Self {
        Self {
            axes: vec![(name, values.to_vec())],
            start: vec![0],
        }
    }

    /// The setting at per-axis indices `idx`.
    pub fn setting(&self, idx: &[usize]) -> Setting {
        Setting {
            values: self
                .axes
                .iter()
                .zip(idx)
                .map(|((name, vals), &i)| (*name, vals.get(i).copied().unwrap_or(f64::NAN)))
                .collect(),
        }
    }

    /// Row-major flat index of `idx` (a stable id of the grid point).
    pub fn flat(&self, idx: &[usize]) -> usize {
        self.axes
            .iter()
            .zip(idx)
            .fold(0, |acc, ((_, vals), &i)| acc * vals.len() + i)
    }

    /// Number of grid points.
    pub fn size(&self) -> usize {
        self.axes.iter().map(|(_, v)| v.len()).product()
    }
}

/// Coordinate search over `grid` minimising `score` (lower is better; non-finite scores never
/// win): from `grid.start`, each axis in turn is swept with the others held at their current
/// best, for up to three cycles or until a cycle changes nothing. A one-axis grid is searched
/// exhaustively. `score` receives the per-axis indices; each point is evaluated once. Returns
/// the best indices, their score and the number of points evaluated.
///
/// Errors: the first error of `score`, or no point with a finite score.
pub fn select(
    grid: &Grid,
    mut score: impl FnMut(&[usize]) -> Result<f64, ExperimentError>,
) -> Result<(Vec<usize>, f64, usize), ExperimentError> {
    if grid.axes.is_empty()
        || grid.axes.iter().any(|(_, v)| v.is_empty())
        || grid.start.len() != grid.axes.len()
        || grid
            .start
            .iter()
            .zip(&grid.axes)
            .any(|(&s, (_, v))| s >= v.len())
    {
        return Err(ExperimentError::Failed(format!(
            "invalid hyper-parameter grid {grid:?}"
        )));
    }
    let mut seen: Vec<(Vec<usize>, f64)> = Vec::new();
    let mut eval = |idx: &[usize], seen: &mut Vec<(Vec<usize>, f64)>| {
        if let Some((_, v)) = seen.iter().find(|(i, _)| i == idx) {
            return Ok(*v);
        }
        let v = score(idx)?;
        let v = if v.is_finite() { v } else { f64::INFINITY };
        seen.push((idx.to_vec(), v));
        Ok::<f64, ExperimentError>(v)
    };
    let mut cur = grid.start.clone();
    let mut cur_score = eval(&cur, &mut seen)?;
    for _ in 0..3 {
        let mut changed = false;
        for (a, (_, vals)) in grid.axes.iter().enumerate() {
            for v in 0..vals.len() {
                let mut idx = cur.clone();
                idx[a] = v;
                let sc = eval(&idx, &mut seen)?;
                if sc < cur_score {
                    cur = idx;
                    cur_score = sc;
                    changed = true;
                }
            }
        }
        if !changed || grid.axes.len() == 1 {
            break;
        }
    }
    if !cur_score.is_finite() {
        return Err(ExperimentError::Failed(
            "no hyper-parameter setting gave a finite validation error".into(),
        ));
    }
    Ok((cur, cur_score, seen.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid3() -> Grid {
        Grid {
            axes: vec![
                ("a", vec![0.0, 1.0, 2.0, 3.0]),
                ("b", vec![10.0, 20.0, 30.0]),
                ("c", vec![-1.0, 1.0]),
            ],
            start: vec![0, 1, 0],
        }
    }

    #[test]
    fn coordinate_search_finds_separable_minimum_evaluating_each_point_once() {
        let g = grid3();
        let mut calls = Vec::new();
        let (best, score, fits) = select(&g, |idx| {
            calls.push(idx.to_vec());
            let s = g.setting(idx);
            let (a, b, c) = (s.get("a")?, s.get("b")?, s.get("c")?);
            Ok((a - 2.0).powi(2) + (b - 30.0).powi(2) + (c - 1.0).powi(2))
        })
        .unwrap();
        assert_eq!(best, vec![2, 2, 1]);
        assert_eq!(score, 0.0);
        assert_eq!(fits, calls.len());
        let mut unique = calls.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), calls.len(), "a point was evaluated twice");
        assert!(fits < g.size());
    }

    #[test]
    fn single_axis_is_exhaustive_and_non_finite_never_wins() {
        let g = Grid::single("λ", &[1.0, 2.0, 3.0]);
        let (best, _, fits) = select(&g, |idx| {
            Ok(match idx[0] {
                0 => f64::NAN,
                1 => 5.0,
                _ => 4.0,
            })
        })
        .unwrap();
        assert_eq!((best, fits), (vec![2], 3));
        assert!(select(&g, |_| Ok(f64::NAN)).is_err());
        let bad = Grid {
            axes: vec![("x", vec![])],
            start: vec![0],
        };
        assert!(select(&bad, |_| Ok(0.0)).is_err());
    }

    #[test]
    fn grid_points_have_distinct_flat_ids() {
        let g = grid3();
        let mut ids = Vec::new();
        for a in 0..4 {
            for b in 0..3 {
                for c in 0..2 {
                    ids.push(g.flat(&[a, b, c]));
                }
            }
        }
        ids.sort_unstable();
        assert_eq!(ids, (0..g.size()).collect::<Vec<_>>());
        assert_eq!(g.setting(&[1, 2, 0]).to_string(), "a = 1, b = 30, c = -1");
    }
}
