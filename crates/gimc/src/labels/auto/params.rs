//! The search settings of `auto` ([`AutoParams`]) and their checked form.

use super::transform::RowTransform;

use gimc_linalg::Gamma;
use gimc_linalg::memory::MemoryBudget;

use crate::error::GimcError;
use crate::error::param_err;
use crate::labels::select::check_validation_fraction;

/// Whether [`auto_fit`](crate::auto_fit) may put the rows themselves in Φ (the linear part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinearPart {
    /// Searched, when the row width is at most [`AutoParams::linear_max_dim`].
    Auto,
    /// Never.
    Off,
}

gimc_linalg::params! {
    /// The search of [`auto_fit`](crate::auto_fit). [`AutoParams::default`] is what `gimc fit` does
    /// with no flags; the `with_*` methods narrow it (a fixed γ, one map family, …), and
    /// [`AutoParams::check`] validates it into the [`ValidAutoParams`] that
    /// [`auto_fit`](crate::auto_fit) takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct AutoParams => ValidAutoParams {
        /// Row transforms tried (those that do not apply to the data are skipped). Default all of
        /// [`RowTransform::ALL`].
        pub transforms: Vec<RowTransform> = RowTransform::ALL.to_vec() => with_transforms,
        /// Candidate RBF widths, each resolved on the transformed training rows. Default
        /// {1/16, 1/4, 1, 4, 16} × the `scale` rule, walked from the rule itself (the middle):
        /// on the twelve sets of the data directory, the walk past 1 × scale raises test
        /// accuracy on abalone, red wine and covertype and leaves the other nine as they were
        /// (docs/BENCHMARKS.md, multilabel-peers).
        pub gammas: Vec<Gamma> = vec![
            Gamma::Scale(0.0625),
            Gamma::Scale(0.25),
            Gamma::SCALE,
            Gamma::Scale(4.0),
            Gamma::Scale(16.0),
        ] => with_gammas,
        /// Candidate λ, each multiplied per block by its mean squared row norm. Default {0.001,
        /// 0.01, 0.1, 1, 10}. In increasing order, each single block walks them from the middle
        /// until the validation score falls; in another order, it scores every one.
        pub lambdas: Vec<f64> = vec![0.001, 0.01, 0.1, 1.0, 10.0] => with_lambdas,
        /// Map families by registry name. Default `lff` and `lnys`.
        pub families: Vec<String> = vec!["lff".into(), "lnys".into()] => with_families,
        /// m of every map (directions or landmarks; Nyström landmarks are capped at the number of
        /// training rows). Default 500.
        pub m: usize = 500 => with_m,
        /// The linear part. Default [`LinearPart::Auto`].
        pub linear: LinearPart = LinearPart::Auto => with_linear,
        /// Widest rows the linear part takes (its Gram matrix is d × d). Default 4096.
        pub linear_max_dim: usize = 4096 => with_linear_max_dim,
        /// Most outer iterations of map learning (0: maps stay random). Default 10.
        pub max_iter: usize = 10 => with_max_iter,
        /// Map learning stops after this many outer iterations without a new best validation
        /// score (on one split, the score of the fit; with folds, the mean over the folds, checked
        /// at the end of each round of the successive halving). Default 2.
        pub patience: usize = 2 => with_patience,
        /// Fraction of the training rows held out for validation, in (0, 1), when the search
        /// uses one split. Default 0.2.
        pub validation_fraction: f64 = 0.2 => with_validation_fraction,
        /// Folds of the cross-validated search on small data (≥ 2; 1 = always one split).
        /// Default 3: on the cross-validated sets of `cargo xtask bench --only
        /// multilabel-peers`, as accurate as 5 folds at about half the time and memory
        /// (docs/BENCHMARKS.md, multilabel-peers).
        pub cv_folds: usize = 3 => with_cv_folds,
        /// Data with at most this many rows is searched by `cv_folds`-fold cross-validation (the
        /// maps are learned on every fold); larger data on one split. Default 2000.
        pub cv_max_rows: usize = 2000 => with_cv_max_rows,
        /// The ks whose mean validation P@k decides (multi-label; multi-class uses accuracy).
        /// Default {1, 3}: more hits per row than P@1 alone, so the choice is less noisy.
        pub select_ks: Vec<usize> = vec![1, 3] => with_select_ks,
        /// On a data-parallel group ([`auto_fit_sharded`](crate::auto_fit_sharded)), the rows
        /// drawn at random from every shard that the search selects on (every row when there are
        /// no more). Default 20,000: the search on Delicious's 12,920 training rows takes about
        /// 20 s on one process of a 2-core machine, and its cost grows linearly in the rows.
        pub sample_rows: usize = 20_000 => with_sample_rows,
        /// Seed of the split and of every map draw. Default 0.
        pub seed: u64 = 0 => with_seed,
        /// The memory pre-flight ([`estimate_auto`](crate::estimate_auto)). Default
        /// [`MemoryBudget::Detect`].
        pub memory: MemoryBudget = MemoryBudget::Detect => with_memory,
        /// Feature columns to drop before anything else (e.g. an identifier attribute with one
        /// value per row). Default none.
        pub exclude_columns: Vec<usize> = Vec::new() => with_exclude_columns,
    }
    /// Checks the search: non-empty lists, valid values.
    check |this| -> crate::GimcError {
        if this.transforms.is_empty() || this.gammas.is_empty() || this.lambdas.is_empty() {
            return Err(GimcError::Empty(
                "auto search (transforms, gammas, lambdas)",
            ));
        }
        if this.families.is_empty() && this.linear == LinearPart::Off {
            return Err(param_err(
                "families",
                "no map family and no linear part: nothing to fit",
            ));
        }
        for &g in &this.gammas {
            g.check()?;
        }
        for &l in &this.lambdas {
            if !(l > 0.0 && l.is_finite()) {
                return Err(param_err(
                    "lambda",
                    format!("must be finite and > 0, got {l}"),
                ));
            }
        }
        if this.m == 0 {
            return Err(param_err("m", "must be at least 1"));
        }
        if this.patience == 0 {
            return Err(param_err("patience", "must be at least 1"));
        }
        check_validation_fraction(this.validation_fraction)?;
        if this.select_ks.is_empty() || this.select_ks.contains(&0) {
            return Err(param_err(
                "select_ks",
                "must be one or more ks of at least 1",
            ));
        }
        if this.sample_rows < 2 {
            return Err(param_err("sample_rows", "must be at least 2"));
        }
        if this.cv_folds == 0 {
            return Err(param_err("cv_folds", "must be at least 1"));
        }
    }
}
