//! What the search reports: every scored setting ([`AutoTrial`]) and the result ([`AutoSelection`]).

use super::transform::RowTransform;

use gimc_linalg::Preprocess;

use crate::labels::model::LabelModel;
use crate::registry::BoxedMap;

/// Which stage of the search a [`AutoTrial`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoStage {
    /// One block with a random map (or the linear part alone).
    Fixed,
    /// A union of blocks with random maps.
    Combined,
    /// The best union with its maps learned on the training part.
    Learned,
}

impl AutoStage {
    /// `fixed`, `combined` or `learned`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Combined => "combined",
            Self::Learned => "learned",
        }
    }
}

/// One block of a candidate's Φ: the linear part or a map of a family at a γ.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockChoice {
    /// `linear`, or the map family's name.
    pub name: String,
    /// γ as a multiple of the scale rule (maps only).
    pub gamma_factor: Option<f64>,
    /// γ resolved on the rows the map saw (maps only).
    pub gamma: Option<f64>,
    /// Outer iterations the map was learned for (0: random map).
    pub iterations: usize,
}

impl BlockChoice {
    pub(super) fn describe(&self) -> String {
        match (self.gamma_factor, self.gamma) {
            (Some(f), Some(g)) => format!(
                "{}(gamma={}*scale={:.4e}{})",
                self.name,
                f,
                g,
                if self.iterations > 0 {
                    format!(", learned {} it.", self.iterations)
                } else {
                    String::new()
                }
            ),
            _ => self.name.clone(),
        }
    }
}

/// One setting the search scored on the validation part.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoTrial {
    /// The stage.
    pub stage: AutoStage,
    /// The row transform.
    pub transform: RowTransform,
    /// The blocks of Φ.
    pub blocks: Vec<BlockChoice>,
    /// The best λ of this setting.
    pub lambda: f64,
    /// Its validation score (the mean P@k over [`AutoParams::select_ks`](crate::AutoParams::select_ks), or accuracy).
    pub score: f64,
}

impl AutoTrial {
    /// A one-line description, e.g. `tfidf-l2 linear+lff(gamma=0.25*scale=…) lambda=0.1`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} lambda={}",
            self.transform.name(),
            self.blocks
                .iter()
                .map(BlockChoice::describe)
                .collect::<Vec<_>>()
                .join("+"),
            self.lambda
        )
    }
}

/// The result of [`auto_fit`](crate::auto_fit).
#[derive(Debug)]
pub struct AutoSelection {
    /// The model refitted on all training rows (its maps: the linear part as an identity map,
    /// then one map per chosen family). It takes rows after [`AutoSelection::preprocess`].
    pub model: LabelModel<BoxedMap>,
    /// The transform of input rows (kept columns, tf-idf, standardisation, row norm).
    pub preprocess: Preprocess,
    /// The chosen setting (stage [`AutoStage::Learned`] when learning paid on validation).
    pub chosen: AutoTrial,
    /// Every setting scored, in search order (best λ of each).
    pub trials: Vec<AutoTrial>,
    /// Constant feature columns dropped.
    pub constant_columns: Vec<usize>,
    /// Columns dropped because the caller excluded them.
    pub excluded_columns: Vec<usize>,
    /// Seconds of the selection (everything before the refit) and of the refit.
    pub seconds: (f64, f64),
}
