//! The multi-label / multi-class path (DESIGN §3.3, GIMC eq. 12): the training data
//! ([`LabelData`]), the objective and its pieces ([`LabelProblem`]), the fit
//! ([`fit_labels`], on shards [`fit_labels_sharded`], row-streamed by [`Storage`]), the fitted
//! model ([`LabelModel`]), the model selection on a validation split ([`select_and_fit`],
//! [`select_combined`]), the default search ([`auto_fit`]) and the linear models of the
//! solvers' toolbox ([`fit_linear`]).

pub(crate) mod auto;
pub(crate) mod data;
pub(crate) mod estimate;
pub(crate) mod fastpath;
pub(crate) mod fit;
pub(crate) mod linear;
pub(crate) mod model;
pub(crate) mod select;
pub(crate) mod shard;
pub(crate) mod streamed;

pub use auto::{
    AutoParams, AutoSelection, AutoStage, AutoTrial, BlockChoice, LinearPart, RowTransform,
    ValidAutoParams, auto_fit, auto_fit_sharded, estimate_auto,
};
pub use data::{LabelData, Task};
pub use fastpath::{LabelFeatures, LabelProblem};
pub use fit::{
    BestIterate, IterationInfo, LabelFit, LabelParams, Scheme, ValidLabelParams,
    estimate_fit_labels, fit_labels, fit_labels_sharded,
};
pub use linear::{
    LinearMethod, LinearParams, LinearSelection, LinearSetting, LinearTrial, ValidLinearParams,
    estimate_linear, fit_linear,
};
pub use model::{Evaluation, LabelModel};
pub use select::{
    Candidate, Chosen, CombinedSelection, Selection, SelectionObserver, SelectionParams,
    SelectionStage, ValidSelectionParams, auto_storage, estimate_selection, select_and_fit,
    select_combined, validation_split,
};
pub use shard::{OneProcess, RowSums};
pub use streamed::{DEFAULT_BLOCK_ENTRIES, Precision, Storage};
